/**
 * Untrusted input through a zod schema, with zod's first complaint turned into the field path and
 * message skillsmith's errors name. Every reader of a user's or a stored file goes through here, so
 * the field naming (dotted, absent for the value as a whole) is the same everywhere.
 */
import type { z } from "zod";
import { type ErrorCode, InputError, type InputLocation } from "./errors.js";
import { err, ok, type Result } from "./result.js";

/** Why a value did not match its schema. */
export interface ParseProblem {
  /** zod's message for the first issue it found. */
  readonly message: string;
  /** The dotted path of that issue's field; absent when the value as a whole is wrong. */
  readonly field?: string;
  /** The same path as segments (symbol keys left out), for finding the field's line. */
  readonly path: readonly (string | number)[];
  /** Every issue's message, in zod's order, for the error's data. */
  readonly issues: readonly string[];
}

/** The first issue of a zod error, as a message and a dotted field path. */
export function firstProblem(error: z.ZodError): ParseProblem {
  const issue = error.issues[0];
  // A path may hold symbols (zod allows any property key): `String` names them where `join` throws.
  const field = issue === undefined ? "" : issue.path.map(String).join(".");
  return {
    message: issue?.message ?? "invalid",
    ...(field === "" ? {} : { field }),
    path: (issue?.path ?? []).filter(
      (segment): segment is string | number =>
        typeof segment === "string" || typeof segment === "number",
    ),
    issues: error.issues.map((each) => each.message),
  };
}

/** "field: " when the problem names a field, else nothing: for messages that lead with the field. */
export function fieldPrefix(problem: ParseProblem): string {
  return problem.field === undefined ? "" : `${problem.field}: `;
}

/** `schema` applied to `value`, never throwing: the parsed value or why it did not match. */
export function parseResult<Output>(
  schema: z.ZodType<Output>,
  value: unknown,
): Result<Output, ParseProblem> {
  const parsed = schema.safeParse(value);
  return parsed.success ? ok(parsed.data) : err(firstProblem(parsed.error));
}

/**
 * JSON text (a stored file's) through `schema`, never throwing: text that is not JSON is a problem
 * on the value as a whole, like a value that does not match.
 */
export function parseJsonResult<Output>(
  schema: z.ZodType<Output>,
  text: string,
): Result<Output, ParseProblem> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const message = `not valid JSON (${error instanceof Error ? error.message : String(error)})`;
    return err({ message, path: [], issues: [message] });
  }
  return parseResult(schema, value);
}

/** How a failed parse is reported as an `InputError`. */
export interface InputParseOptions {
  /** The error's code, e.g. "bench.run-manifest-invalid". */
  readonly code: ErrorCode;
  /** Where the value came from; the failing field is added to it. */
  readonly location?: InputLocation;
  /**
   * The error's message from zod's, so it can say what was expected (e.g. "each line needs id,
   * prompt"); zod's message alone when absent.
   */
  readonly describe?: (problem: ParseProblem) => string;
  /** The line a field is written on (a YAML file's `lineOf`), when the location names none. */
  readonly lineOf?: (path: readonly (string | number)[]) => number | undefined;
}

/**
 * `schema` applied to `value`; a mismatch is an `InputError` naming the file, line and field, with
 * every issue's message in its data.
 */
export function parseInput<Output>(
  schema: z.ZodType<Output>,
  value: unknown,
  options: InputParseOptions,
): Output {
  const parsed = parseResult(schema, value);
  if (parsed.ok) return parsed.value;
  const problem = parsed.error;
  const line = options.location?.line ?? options.lineOf?.(problem.path);
  throw new InputError(
    options.code,
    options.describe === undefined ? problem.message : options.describe(problem),
    {
      ...options.location,
      ...(line === undefined ? {} : { line }),
      ...(problem.field === undefined ? {} : { field: problem.field }),
    },
    { data: { issues: problem.issues } },
  );
}
