/**
 * Running the fixed solver over a split with one of the methods — zero-shot, RAG (raw retrieved
 * attempts in context), a static skill synthesised once from the pool, per-task synthesis, and
 * the baselines ReAct (the solver in a reason-act loop with tools), SkillOpt-like (one static
 * skill whose slot library was optimised on the training split) and Best-of-N (N samples at
 * temperature > 0, one chosen by a visible-only check) — and comparing them on score and cost.
 *
 * One file (a little over 400 lines) because every method runs through the one per-task function
 * (`runMethod`) that records it alike; splitting methods apart would duplicate that recording.
 */

import { definedFields } from "../core/defined.js";
import { InternalError, UnsupportedError, UsageError } from "../core/errors.js";
import { mapLimit } from "../core/limit.js";
import type { ModelClient } from "../model/index.js";
import { appendRedactedJsonLine } from "../model/redact.js";
import {
  addTokens,
  type CostRow,
  costRow,
  mergeUsage,
  type RolePrices,
  type RoleUsage,
  renderCostTable,
  type TokenPrice,
} from "./cost.js";
import {
  type AttemptScore,
  type FamilyTask,
  type SolverAttempt,
  type SolverContext,
  type TaskFamilyV1,
  type VisibleTask,
  visibleView,
} from "./family.js";
import { type PoolEntry, renderEvidence } from "./pool.js";
import {
  EmbeddingIndex,
  type RetrievalMethod,
  type RetrievalOptions,
  type RetrievalRecord,
  retrieveEntries,
} from "./retrieval.js";
import type { ModelRole, RoleModels } from "./roles.js";
import { defaultTopK, type SynthSettings } from "./settings.js";
import type { SlotLibrary } from "./slots.js";
import { type SynthesisResult, synthesiseSkill } from "./synthesise.js";

export const methods = [
  "zero-shot",
  "rag",
  "static-skill",
  "synth",
  "react",
  "skillopt",
  "best-of-n",
] as const;
export type Method = (typeof methods)[number];

/** Methods whose skill comes from a slot library (recorded with its version). */
const libraryMethods: ReadonlySet<Method> = new Set(["synth", "static-skill", "skillopt"]);

export const defaultSamples = 4;
export const defaultSampleTemperature = 0.8;

/** How Best-of-N chose its answer: every sample, its visible-only check score, the pick. */
export interface BestOfNRecord {
  readonly n: number;
  readonly temperature: number;
  /** The family's self-check criterion, or `self-consistency` (most frequent answer). */
  readonly criterion: string;
  readonly checkScores: readonly number[];
  readonly chosen: number;
  readonly samples: readonly string[];
}

/**
 * One task's attempt by one method: the family's score of it (`AttemptScore`: check names and
 * statuses, never their messages; model-visible feedback only) and how it was made.
 */
export interface TaskRunRecord extends AttemptScore {
  readonly method: Method;
  readonly libraryVersion?: string;
  readonly taskId: string;
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
  /** Steps of a multi-step solver (ReAct, coding agents), abbreviated. */
  readonly steps?: readonly string[];
  readonly bestOfN?: BestOfNRecord;
  readonly usage: RoleUsage;
}

export interface MethodResult {
  readonly method: Method;
  readonly libraryVersion?: string;
  readonly records: readonly TaskRunRecord[];
  readonly meanScore: number;
  readonly fallbacks: number;
  /** Best-of-N: samples per task. */
  readonly samples?: number;
  /** Usage of every call, per-task calls and the one static synthesis included. */
  readonly usage: RoleUsage;
}

/** What running a family's tasks needs, whether one method (`runMethod`) or an optimisation. */
export interface FamilyRunOptions {
  readonly family: TaskFamilyV1;
  /** The model of every role not given its own in `models`. */
  readonly model: ModelClient;
  /** A model per role (solver, synthesiser, critic, editor); a missing role uses `model`. */
  readonly models?: RoleModels;
  readonly pool: readonly PoolEntry[];
  readonly retrieval?: RetrievalOptions;
  readonly concurrency?: number;
  readonly onProgress?: (line: string) => void;
  readonly signal?: AbortSignal;
}

export interface RunMethodOptions extends FamilyRunOptions {
  readonly tasks: readonly FamilyTask[];
  readonly method: Method;
  readonly library: SlotLibrary;
  /** Best-of-N: samples per task (default 4) and their temperature (default 0.8). */
  readonly samples?: number;
  readonly sampleTemperature?: number;
  /** Append every task record to this JSONL file (the run log). */
  readonly logPath?: string;
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

/** The most frequent answer, ties to the earliest: Best-of-N's choice without a self-check. */
function mostFrequent(outputs: readonly string[]): number {
  let best = 0;
  let bestCount = 0;
  outputs.forEach((output, index) => {
    const count = outputs.filter((other) => other === output).length;
    if (count > bestCount) {
      best = index;
      bestCount = count;
    }
  });
  return best;
}

/** `usage` plus one solver attempt's tokens; an attempt that does not count its calls made one. */
function addSolverTokens(usage: RoleUsage, attempt: SolverAttempt): RoleUsage {
  return addTokens(usage, "solver", attempt.inputTokens, attempt.outputTokens, attempt.calls ?? 1);
}

/**
 * Best-of-N: `n` solver samples at `temperature` (seeds 1..n), then one chosen by the family's
 * visible-only self-check (highest score; ties to the most frequent answer among the tied, then
 * the earliest), or by self-consistency when the family has none. The hidden tests score only
 * the chosen answer and never take part in the choice.
 */
async function bestOfN(
  family: TaskFamilyV1,
  model: ModelClient,
  visible: VisibleTask,
  context: SolverContext,
  n: number,
  temperature: number,
  signal: AbortSignal | undefined,
): Promise<{ attempt: SolverAttempt; record: BestOfNRecord; usage: RoleUsage }> {
  let usage: RoleUsage = {};
  const attempts: SolverAttempt[] = [];
  for (let sample = 1; sample <= n; sample += 1) {
    const attempt = await family.solve(model, visible, context, signal, {
      temperature,
      seed: sample,
    });
    attempts.push(attempt);
    usage = addSolverTokens(usage, attempt);
  }
  const outputs = attempts.map((attempt) => attempt.output);
  let chosen: number;
  let criterion = "self-consistency (most frequent answer)";
  let checkScores: number[] = [];
  if (family.selfCheck === undefined) chosen = mostFrequent(outputs);
  else {
    const check = await family.selfCheck(model, visible, outputs, signal);
    if (check.calls > 0)
      usage = addTokens(usage, "solver", check.inputTokens, check.outputTokens, check.calls);
    criterion = check.criterion;
    checkScores = [...check.scores];
    const best = Math.max(...checkScores);
    const tied = outputs.map((_, index) => index).filter((index) => checkScores[index] === best);
    const tiedOutputs = tied.map((index) => outputs[index] ?? "");
    chosen = tied[mostFrequent(tiedOutputs)] ?? 0;
  }
  const attempt = attempts[chosen] ?? attempts[0];
  if (attempt === undefined)
    throw new InternalError("synth.best-of-n-empty", "Best-of-N produced no sample");
  return {
    attempt,
    record: { n, temperature, criterion, checkScores, chosen, samples: outputs },
    usage,
  };
}

export async function runMethod(options: RunMethodOptions): Promise<MethodResult> {
  const { family, method, library, pool } = options;
  const solver = options.models?.solver ?? options.model;
  const synthesiser = options.models?.synthesiser ?? options.model;
  const retrievalOptions = options.retrieval ?? {};
  const k = retrievalOptions.k ?? defaultTopK;
  const samples = options.samples ?? defaultSamples;
  const temperature = options.sampleTemperature ?? defaultSampleTemperature;
  if (method === "best-of-n" && (!Number.isSafeInteger(samples) || samples < 1))
    throw new UsageError("synth.best-of-n-samples", `Best-of-N needs N ≥ 1, got ${samples}`);
  if (method === "react" && family.solveReact === undefined)
    throw new UnsupportedError(
      "synth.react-unsupported",
      `the task family "${family.name}" has no ReAct solver`,
    );
  // One index per method run: pool vectors are embedded once and reused by every task.
  const index =
    retrievalOptions.embedding === undefined
      ? undefined
      : new EmbeddingIndex(retrievalOptions.embedding);
  let setupUsage: RoleUsage = {};
  let staticSkill: SynthesisResult | undefined;
  if (method === "static-skill" || method === "skillopt") {
    staticSkill = await synthesiseSkill(
      synthesiser,
      library,
      { kind: "family", family: family.name, description: family.description },
      staticEvidence(pool, k),
      options.signal,
    );
    setupUsage = addTokens({}, "synthesiser", staticSkill.inputTokens, staticSkill.outputTokens);
    options.onProgress?.(
      `${method} skill synthesised with library ${library.version} (${staticSkill.valid ? "valid" : `invalid: ${staticSkill.problems.join("; ")}`})`,
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
      const tokensBefore = index?.inputTokens ?? 0;
      const callsBefore = index?.calls ?? 0;
      const found = await retrieveEntries(visible, pool, retrievalOptions, index, options.signal);
      if (index !== undefined && index.calls > callsBefore)
        usage = addTokens(
          usage,
          "embedder",
          index.inputTokens - tokensBefore,
          0,
          index.calls - callsBefore,
        );
      retrieval = found.record;
      if (method === "rag") evidence = renderEvidence(found.entries);
      else {
        skill = await synthesiseSkill(
          synthesiser,
          library,
          { kind: "task", task: visible },
          found.entries,
          options.signal,
        );
        usage = addTokens(usage, "synthesiser", skill.inputTokens, skill.outputTokens);
      }
    }
    if (method === "static-skill" || method === "skillopt") skill = staticSkill;
    const useSkill = skill?.valid === true ? skill.markdown : undefined;
    const context: SolverContext = {
      ...definedFields({ skillMarkdown: useSkill, evidence }),
    };
    let attempt: SolverAttempt;
    let sampling: BestOfNRecord | undefined;
    if (method === "best-of-n") {
      const best = await bestOfN(
        family,
        solver,
        visible,
        context,
        samples,
        temperature,
        options.signal,
      );
      attempt = best.attempt;
      sampling = best.record;
      usage = mergeUsage(usage, best.usage);
    } else {
      attempt =
        method === "react" && family.solveReact !== undefined
          ? await family.solveReact(solver, visible, context, options.signal)
          : await family.solve(solver, visible, context, options.signal);
      usage = addSolverTokens(usage, attempt);
    }
    const score = await family.score(task, attempt.output, options.signal);
    const record: TaskRunRecord = {
      method,
      ...(libraryMethods.has(method) ? { libraryVersion: library.version } : {}),
      taskId: task.id,
      score: score.score,
      passed: score.passed,
      total: score.total,
      flags: score.flags,
      checks: score.checks.map((check) => ({ name: check.name, status: check.status })),
      ...(score.feedback === undefined ? {} : { feedback: score.feedback }),
      solverOutput: attempt.output,
      ...(retrieval === undefined ? {} : { retrieval }),
      ...(skill === undefined
        ? {}
        : { skill: { markdown: skill.markdown, valid: skill.valid, problems: skill.problems } }),
      fallback: skill !== undefined && !skill.valid,
      ...definedFields({ steps: attempt.steps, bestOfN: sampling }),
      usage,
    };
    // The run log keeps solver outputs and synthesised skills: redacted like every store.
    if (options.logPath !== undefined) await appendRedactedJsonLine(options.logPath, record);
    done += 1;
    options.onProgress?.(
      `[${method}] ${done}/${options.tasks.length} ${task.id}: ${score.score.toFixed(2)}${record.fallback ? " (skill invalid, ran without)" : ""}${sampling === undefined ? "" : ` (sample ${sampling.chosen + 1} of ${sampling.n})`}`,
    );
    return record;
  });
  const meanScore =
    records.length === 0
      ? 0
      : records.reduce((sum, record) => sum + record.score, 0) / records.length;
  return {
    method,
    ...(libraryMethods.has(method) ? { libraryVersion: library.version } : {}),
    records,
    meanScore,
    fallbacks: records.filter((record) => record.fallback).length,
    ...(method === "best-of-n" ? { samples } : {}),
    usage: mergeUsage(setupUsage, ...records.map((record) => record.usage)),
  };
}

export interface ComparisonReport {
  readonly family: string;
  readonly split: string;
  readonly model: string;
  /** The model of each role (flag > environment > config > `--model`), when they were resolved. */
  readonly models?: Readonly<Record<ModelRole, string>>;
  readonly taskCount: number;
  readonly retrieval: RetrievalMethod;
  /** Protocol C's numbers in force (top-k, temperatures, split seed and share …), when given. */
  readonly settings?: SynthSettings;
  /** Tasks in the pool : tasks run — protocol C's pool-to-test ratio, as it was. */
  readonly poolTasks?: number;
  readonly results: readonly {
    readonly method: Method;
    readonly libraryVersion?: string;
    readonly meanScore: number;
    readonly fallbacks: number;
    readonly samples?: number;
  }[];
  readonly cost: readonly CostRow[];
}

/** Score and cost per method; zero-shot must be among the results (it is the cost baseline). */
export function compareMethods(
  context: {
    family: string;
    split: string;
    model: string;
    taskCount: number;
    retrieval?: RetrievalMethod;
    settings?: SynthSettings;
    poolTasks?: number;
    models?: Readonly<Record<ModelRole, string>>;
    /** The list price (one model, or one per role): cost rows then carry an estimate in dollars. */
    price?: TokenPrice | RolePrices;
  },
  results: readonly MethodResult[],
): ComparisonReport {
  const zeroShot = results.find((result) => result.method === "zero-shot")?.usage ?? {};
  const { price, ...rest } = context;
  return {
    ...rest,
    retrieval: context.retrieval ?? "bm25",
    results: results.map((result) => ({
      method: result.method,
      ...(result.libraryVersion === undefined ? {} : { libraryVersion: result.libraryVersion }),
      meanScore: result.meanScore,
      fallbacks: result.fallbacks,
      ...(result.samples === undefined ? {} : { samples: result.samples }),
    })),
    cost: results.map((result) => costRow(result.method, result.usage, zeroShot, price)),
  };
}

/** "models: solver …, synthesiser …" when any role runs on another model than `--model`. */
export function modelsLine(models: Readonly<Record<ModelRole, string>> | undefined): string[] {
  if (models === undefined) return [];
  const specs = Object.entries(models);
  if (new Set(specs.map(([, spec]) => spec)).size <= 1) return [];
  return [`models: ${specs.map(([role, spec]) => `${role} ${spec}`).join(", ")}`];
}

export function renderComparison(report: ComparisonReport): string[] {
  const lines = [
    `family ${report.family}, split ${report.split}, ${report.taskCount} tasks, model ${report.model}, retrieval ${report.retrieval}`,
    ...(report.settings === undefined
      ? []
      : [
          ...modelsLine(report.models),
          `top-k ${report.settings.topK}, split seed ${report.settings.split.seed} (train share ${report.settings.split.trainShare}), pool ${report.poolTasks ?? "?"} tasks : ${report.taskCount} run, temperatures solver ${report.settings.temperatures.solver} / synthesiser ${report.settings.temperatures.synthesiser}`,
        ]),
    "",
    "method        score   fallbacks  library  notes",
  ];
  for (const result of report.results)
    lines.push(
      `${result.method.padEnd(12)}  ${result.meanScore.toFixed(3)}  ${String(result.fallbacks).padStart(9)}  ${(result.libraryVersion ?? "-").padEnd(7)}  ${result.samples === undefined ? "" : `N = ${result.samples} samples per task, all counted in the cost`}`.trimEnd(),
    );
  lines.push(
    "",
    `cost (input/output tokens per role; relative cost (I + 2·O) / (I₀ + 2·O₀) vs zero-shot${report.cost.some((row) => row.estimatedUsd !== undefined) ? `; est. USD at ${report.models === undefined ? `${report.model}'s` : "each role's model's"} list price, embeddings not priced` : ""})`,
  );
  lines.push(...renderCostTable(report.cost));
  return lines;
}
