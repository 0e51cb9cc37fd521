/** `synth pool`: run the zero-shot solver over a split and append each attempt to the pool. */

import { mapLimit } from "../core/limit.js";
import { formatModelSpec, type ModelClient } from "../model/index.js";
import { type FamilyTask, type Split, type TaskFamilyV1, visibleView } from "./family.js";
import { appendPoolEntry, type PoolEntry, poolSchemaVersion, readPool } from "./pool.js";
import { defaultTrainShare } from "./settings.js";

export interface BuildPoolOptions {
  readonly family: TaskFamilyV1;
  readonly model: ModelClient;
  readonly tasks: readonly FamilyTask[];
  readonly split: Split;
  /** The split's seed, recorded in every entry. */
  readonly splitSeed?: number;
  readonly path: string;
  readonly concurrency?: number;
  readonly onProgress?: (line: string) => void;
  readonly signal?: AbortSignal;
}

export interface BuildPoolResult {
  readonly added: number;
  /** Tasks already in the pool for this family and model (a resumed build skips them). */
  readonly skipped: number;
  readonly entries: readonly PoolEntry[];
}

export async function buildPool(options: BuildPoolOptions): Promise<BuildPoolResult> {
  const { family, model } = options;
  const modelName = formatModelSpec(model.spec);
  const existing = await readPool(options.path);
  const done = new Set(
    existing
      .filter((entry) => entry.family === family.name && entry.model === modelName)
      .map((entry) => entry.taskId),
  );
  const todo = options.tasks.filter((task) => !done.has(task.id));
  let count = 0;
  const added = await mapLimit(todo, options.concurrency ?? 2, async (task) => {
    const visible = visibleView(family, task);
    const attempt = await family.solve(model, visible, {}, options.signal);
    const score = await family.score(task, attempt.output, options.signal);
    const entry: PoolEntry = {
      schema: poolSchemaVersion,
      family: family.name,
      taskId: task.id,
      split: options.split,
      ...(options.splitSeed === undefined ? {} : { splitSeed: options.splitSeed }),
      trainShare: family.trainShare ?? defaultTrainShare,
      model: modelName,
      visible: { ...visible.fields },
      solverOutput: attempt.output,
      outcome: {
        score: score.score,
        passed: score.passed,
        total: score.total,
        flags: [...score.flags],
      },
      evaluatorSignals: {
        checks: score.checks.map((check) => ({ ...check })),
        ...(score.feedback === undefined ? {} : { feedback: score.feedback }),
      },
      usage: { inputTokens: attempt.inputTokens, outputTokens: attempt.outputTokens },
      createdAt: new Date().toISOString(),
    };
    await appendPoolEntry(options.path, entry);
    count += 1;
    options.onProgress?.(`[pool] ${count}/${todo.length} ${task.id}: ${score.score.toFixed(2)}`);
    return entry;
  });
  return {
    added: added.length,
    skipped: options.tasks.length - todo.length,
    entries: [...existing, ...added],
  };
}
