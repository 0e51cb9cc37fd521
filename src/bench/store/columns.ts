/**
 * The JSON columns of the results store, read back through their schemas: a row written by
 * another version, edited by hand or damaged on disk is refused with the file, the run and the
 * column named, instead of travelling on as a value of the wrong shape.
 */
import { z } from "zod";
import { InputError } from "../../core/errors.js";
import { fieldPrefix, parseResult } from "../../core/parse.js";

// Loose objects: a field added by a later version is kept, not dropped on the way through.
export const checkResultsSchema = z.array(
  z.looseObject({
    name: z.string(),
    status: z.enum(["pass", "fail", "error", "skip"]),
    message: z.string().exactOptional(),
  }),
);

export const flagsSchema = z.array(z.string());

export const requiredFilesSchema = z.record(z.string(), z.boolean());

export const verifierRecordSchema = z.looseObject({
  output: z.string(),
  exitCode: z.number().int().nullable(),
  durationMs: z.number(),
  source: z.string().exactOptional(),
  evidence: z.array(z.string()).exactOptional(),
  canaries: z
    .array(z.looseObject({ name: z.string(), file: z.string(), expect: z.enum(["pass", "fail"]) }))
    .exactOptional(),
});

export const runPatchSchema = z.looseObject({
  diff: z.string(),
  length: z.number().int().min(0),
  files: z.number().int().min(0),
  truncated: z.boolean(),
  redacted: z.boolean(),
  incomplete: z.string().exactOptional(),
  scan: z
    .array(
      z.looseObject({
        file: z.string(),
        line: z.number().int().min(1),
        // A rule a later version adds is still read (shown by its id), not refused.
        rule: z.string(),
        detail: z.string(),
      }),
    )
    .exactOptional(),
});

export const fingerprintInputsSchema = z.record(z.string(), z.unknown());

export const provenanceSchema = z.discriminatedUnion("kind", [
  z.looseObject({ kind: z.literal("reused"), runDir: z.string(), key: z.string() }),
  z.looseObject({
    kind: z.literal("regraded"),
    runDir: z.string(),
    key: z.string(),
    passRatio: z.number(),
    rescored: z.boolean(),
    reason: z.string().exactOptional(),
  }),
]);

/** A trajectory is whatever the harness recorded: any JSON value. */
export const trajectorySchema = z.unknown();

/**
 * One JSON column of one row, parsed and checked; an `InputError` naming the store file, the
 * run and the column otherwise.
 */
export function readColumn<Output>(
  schema: z.ZodType<Output>,
  text: string,
  where: { readonly file: string; readonly run: string; readonly column: string },
): Output {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new InputError(
      "bench.results-column-invalid",
      `${where.run}: column ${where.column} is not JSON (${error instanceof Error ? error.message : String(error)})`,
      { file: where.file },
    );
  }
  const parsed = parseResult(schema, value);
  if (parsed.ok) return parsed.value;
  throw new InputError(
    "bench.results-column-invalid",
    `${where.run}: column ${where.column}: ${fieldPrefix(parsed.error)}${parsed.error.message}`,
    { file: where.file },
    { data: { issues: parsed.error.issues } },
  );
}
