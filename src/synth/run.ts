/**
 * Running the fixed solver over a split with one of four methods — zero-shot, RAG (raw retrieved
 * attempts in context), a static skill synthesised once from the pool, and per-task synthesis —
 * and comparing them on score and cost.
 */
import { appendFile, mkdir } from "node:fs/promises";
import { dirname } from "node:path";
import type { ModelClient } from "../model/index.js";
import {
  addTokens,
  type CostRow,
  costRow,
  mergeUsage,
  type RoleUsage,
  renderCostTable,
} from "./cost.js";
import { type FamilyTask, type TaskFamilyV1, visibleView } from "./family.js";
import { type PoolEntry, renderEvidence } from "./pool.js";
import { type RetrievalOptions, type RetrievalRecord, retrieve } from "./retrieval.js";
import type { SlotLibrary } from "./slots.js";
import { type SynthesisResult, synthesiseSkill } from "./synthesise.js";

export const methods = ["zero-shot", "rag", "static-skill", "synth"] as const;
export type Method = (typeof methods)[number];

export interface TaskRunRecord {
  readonly method: Method;
  readonly libraryVersion?: string;
  readonly taskId: string;
  readonly score: number;
  readonly passed: number;
  readonly total: number;
  readonly flags: readonly string[];
  readonly solverOutput: string;
  readonly retrieval?: RetrievalRecord;
  /** The skill the solver was given (or that was rejected): discarded after the task, kept here. */
  readonly skill?: {
    readonly markdown: string;
    readonly valid: boolean;
    readonly problems: readonly string[];
  };
  /** True when synthesis failed validation and the solver ran without a skill. */
  readonly fallback: boolean;
  readonly usage: RoleUsage;
}

export interface MethodResult {
  readonly method: Method;
  readonly libraryVersion?: string;
  readonly records: readonly TaskRunRecord[];
  readonly meanScore: number;
  readonly fallbacks: number;
  /** Usage of every call, per-task calls and the one static synthesis included. */
  readonly usage: RoleUsage;
}

export interface RunMethodOptions {
  readonly family: TaskFamilyV1;
  readonly model: ModelClient;
  readonly tasks: readonly FamilyTask[];
  readonly pool: readonly PoolEntry[];
  readonly method: Method;
  readonly library: SlotLibrary;
  readonly retrieval?: RetrievalOptions;
  readonly concurrency?: number;
  /** Append every task record to this JSONL file (the run log). */
  readonly logPath?: string;
  readonly onProgress?: (line: string) => void;
  readonly signal?: AbortSignal;
}

/** Run `worker` over `items` with at most `limit` in flight; results keep the input order. */
export async function mapLimit<T, R>(
  items: readonly T[],
  limit: number,
  worker: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const lanes = Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, async () => {
    for (;;) {
      const index = next;
      next += 1;
      if (index >= items.length) return;
      results[index] = await worker(items[index] as T, index);
    }
  });
  await Promise.all(lanes);
  return results;
}

/** Evidence for the static skill: the best-scoring pool entries, ties by task id. */
export function staticEvidence(pool: readonly PoolEntry[], k: number): PoolEntry[] {
  return [...pool]
    .sort(
      (left, right) =>
        right.outcome.score - left.outcome.score || left.taskId.localeCompare(right.taskId),
    )
    .slice(0, k);
}

export async function runMethod(options: RunMethodOptions): Promise<MethodResult> {
  const { family, model, method, library, pool } = options;
  const k = options.retrieval?.k ?? 3;
  let setupUsage: RoleUsage = {};
  let staticSkill: SynthesisResult | undefined;
  if (method === "static-skill") {
    staticSkill = await synthesiseSkill(
      model,
      library,
      { kind: "family", family: family.name, description: family.description },
      staticEvidence(pool, k),
      options.signal,
    );
    setupUsage = addTokens({}, "synthesiser", staticSkill.inputTokens, staticSkill.outputTokens);
    options.onProgress?.(
      `static skill synthesised (${staticSkill.valid ? "valid" : `invalid: ${staticSkill.problems.join("; ")}`})`,
    );
  }
  let done = 0;
  const records = await mapLimit(options.tasks, options.concurrency ?? 2, async (task) => {
    const visible = visibleView(family, task);
    let usage: RoleUsage = {};
    let retrieval: RetrievalRecord | undefined;
    let skill: SynthesisResult | undefined;
    let evidence: string | undefined;
    if (method === "rag" || method === "synth") {
      const found = retrieve(visible, pool, options.retrieval);
      retrieval = found.record;
      if (method === "rag") evidence = renderEvidence(found.entries);
      else {
        skill = await synthesiseSkill(
          model,
          library,
          { kind: "task", task: visible },
          found.entries,
          options.signal,
        );
        usage = addTokens(usage, "synthesiser", skill.inputTokens, skill.outputTokens);
      }
    }
    if (method === "static-skill") skill = staticSkill;
    const useSkill = skill?.valid === true ? skill.markdown : undefined;
    const attempt = await family.solve(
      model,
      visible,
      {
        ...(useSkill === undefined ? {} : { skillMarkdown: useSkill }),
        ...(evidence === undefined ? {} : { evidence }),
      },
      options.signal,
    );
    usage = addTokens(usage, "solver", attempt.inputTokens, attempt.outputTokens);
    const score = await family.score(task, attempt.output, options.signal);
    const record: TaskRunRecord = {
      method,
      ...(method === "synth" || method === "static-skill"
        ? { libraryVersion: library.version }
        : {}),
      taskId: task.id,
      score: score.score,
      passed: score.passed,
      total: score.total,
      flags: score.flags,
      solverOutput: attempt.output,
      ...(retrieval === undefined ? {} : { retrieval }),
      ...(skill === undefined
        ? {}
        : { skill: { markdown: skill.markdown, valid: skill.valid, problems: skill.problems } }),
      fallback: skill !== undefined && !skill.valid,
      usage,
    };
    if (options.logPath !== undefined) {
      await mkdir(dirname(options.logPath), { recursive: true });
      await appendFile(options.logPath, `${JSON.stringify(record)}\n`);
    }
    done += 1;
    options.onProgress?.(
      `[${method}] ${done}/${options.tasks.length} ${task.id}: ${score.score.toFixed(2)}${record.fallback ? " (skill invalid, ran without)" : ""}`,
    );
    return record;
  });
  const meanScore =
    records.length === 0
      ? 0
      : records.reduce((sum, record) => sum + record.score, 0) / records.length;
  return {
    method,
    ...(method === "synth" || method === "static-skill" ? { libraryVersion: library.version } : {}),
    records,
    meanScore,
    fallbacks: records.filter((record) => record.fallback).length,
    usage: mergeUsage(setupUsage, ...records.map((record) => record.usage)),
  };
}

export interface ComparisonReport {
  readonly family: string;
  readonly split: string;
  readonly model: string;
  readonly taskCount: number;
  readonly retrieval: "bm25" | "embedding";
  readonly results: readonly {
    readonly method: Method;
    readonly libraryVersion?: string;
    readonly meanScore: number;
    readonly fallbacks: number;
  }[];
  readonly cost: readonly CostRow[];
}

/** Score and cost per method; zero-shot must be among the results (it is the cost baseline). */
export function compareMethods(
  context: { family: string; split: string; model: string; taskCount: number },
  results: readonly MethodResult[],
): ComparisonReport {
  const zeroShot = results.find((result) => result.method === "zero-shot")?.usage ?? {};
  return {
    ...context,
    retrieval: "bm25",
    results: results.map((result) => ({
      method: result.method,
      ...(result.libraryVersion === undefined ? {} : { libraryVersion: result.libraryVersion }),
      meanScore: result.meanScore,
      fallbacks: result.fallbacks,
    })),
    cost: results.map((result) => costRow(result.method, result.usage, zeroShot)),
  };
}

export function renderComparison(report: ComparisonReport): string[] {
  const lines = [
    `family ${report.family}, split ${report.split}, ${report.taskCount} tasks, model ${report.model}, retrieval ${report.retrieval}`,
    "",
    "method        score   fallbacks  library",
  ];
  for (const result of report.results)
    lines.push(
      `${result.method.padEnd(12)}  ${result.meanScore.toFixed(3)}  ${String(result.fallbacks).padStart(9)}  ${result.libraryVersion ?? "-"}`,
    );
  lines.push(
    "",
    "cost (input/output tokens per role; relative cost (I + 2·O) / (I₀ + 2·O₀) vs zero-shot)",
  );
  lines.push(...renderCostTable(report.cost));
  return lines;
}
