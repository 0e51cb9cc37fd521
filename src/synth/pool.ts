/**
 * The trajectory pool: one JSON line per attempt on a training task (visible fields, the solver's
 * output, outcome, evaluator signals). Append-only; a pool build resumes by skipping tasks already
 * recorded for the same family and model.
 */
import { readFile } from "node:fs/promises";
import { z } from "zod";
import { InputError } from "../core/errors.js";
import { parseInput } from "../core/parse.js";
import { appendRedactedJsonLine } from "../model/redact.js";

/**
 * Schema 2 adds the split's seed and train share (so a run can tell a pool built on another
 * split) and the family's feedback among the evaluator signals; schema 1 entries still read.
 */
export const poolSchemaVersion = 2;

export const poolEntrySchema = z.strictObject({
  schema: z.union([z.literal(1), z.literal(2)]),
  family: z.string(),
  taskId: z.string(),
  split: z.enum(["train", "test"]),
  /** The seed and train share of the split the task was drawn from (schema 2). */
  splitSeed: z.number().int().optional(),
  trainShare: z.number().optional(),
  model: z.string(),
  /** Target-visible fields only. */
  visible: z.record(z.string(), z.string()),
  /** The solver's steps; for one-call solvers, its single answer. */
  solverOutput: z.string(),
  outcome: z.strictObject({
    score: z.number().min(0).max(1),
    passed: z.number().int().nonnegative(),
    total: z.number().int().nonnegative(),
    flags: z.array(z.string()),
  }),
  /** Evaluator-only signals: kept for audit, never rendered into a prompt. */
  evaluatorSignals: z.strictObject({
    checks: z.array(z.strictObject({ name: z.string(), status: z.string() })),
    feedback: z.string().optional(),
  }),
  usage: z.strictObject({ inputTokens: z.number(), outputTokens: z.number() }),
  createdAt: z.string(),
});
export type PoolEntry = z.infer<typeof poolEntrySchema>;

/**
 * Read a pool file. A missing file is an empty pool; an unparsable last line is a torn append
 * (the writer was killed) and is ignored; any other bad line is an `InputError` naming it.
 */
export async function readPool(path: string): Promise<PoolEntry[]> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw new InputError(
      "synth.pool-unreadable",
      "cannot read the pool file",
      { file: path },
      {
        cause: error,
      },
    );
  }
  const lines = text.split("\n");
  const entries: PoolEntry[] = [];
  const lastContentLine = lines.findLastIndex((line) => line.trim() !== "");
  for (const [index, line] of lines.entries()) {
    if (line.trim() === "") continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (cause) {
      if (index === lastContentLine && !text.endsWith("\n")) break;
      throw new InputError(
        "synth.pool-syntax",
        "not valid JSON",
        { file: path, line: index + 1 },
        {
          cause,
        },
      );
    }
    entries.push(
      parseInput(poolEntrySchema, value, {
        code: "synth.pool-entry",
        location: { file: path, line: index + 1 },
        describe: (problem) => `${problem.message} (expected a pool entry of schema 1 or 2)`,
      }),
    );
  }
  return entries;
}

/** Append one entry; redacted like every store (trajectories and answers can quote a key). */
export async function appendPoolEntry(path: string, entry: PoolEntry): Promise<void> {
  await appendRedactedJsonLine(path, poolEntrySchema.parse(entry));
}

/**
 * Past attempts as evidence text for a prompt: visible fields, the answer and its score. The
 * evaluator signals are deliberately left out (they can quote hidden tests).
 */
export function renderEvidence(entries: readonly PoolEntry[]): string {
  if (entries.length === 0) return "(no related attempts)";
  return entries
    .map((entry, index) => {
      const fields = Object.entries(entry.visible)
        .map(([name, value]) => `${name}: ${value}`)
        .join("\n");
      return [
        `## Attempt ${index + 1}: ${entry.taskId}`,
        fields,
        `Score: ${entry.outcome.score.toFixed(2)} (${entry.outcome.passed}/${entry.outcome.total} hidden checks passed)`,
        "Answer:",
        "```",
        entry.solverOutput.trimEnd(),
        "```",
      ].join("\n");
    })
    .join("\n\n");
}
