import { randomBytes } from "node:crypto";
import { mkdir, rename, rm, stat, writeFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { InputError } from "./errors.js";

/**
 * Write a file so that readers see either the old content or the new, never a half-written
 * file: write to a temporary sibling, then rename over the target (atomic on one filesystem).
 */
export async function writeFileAtomic(path: string, content: string | Uint8Array): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const temporary = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString("hex")}.tmp`);
  try {
    await writeFile(temporary, content);
    await rename(temporary, path);
  } catch (error) {
    // Name the file the caller meant (not the temporary sibling), also where Node names none
    // (a write that ran out of space): error messages must say which file could not be written.
    if (error !== null && typeof error === "object") (error as { path?: string }).path = path;
    throw error;
  } finally {
    await rm(temporary, { force: true });
  }
}

/** Error codes that mean "there is nothing at this path" (a missing file or folder on the way). */
const MISSING_CODES = new Set(["ENOENT", "ENOTDIR"]);

/** True when a file-system error says the path does not exist, not that it cannot be read. */
export function isMissing(error: unknown): boolean {
  return (
    error !== null &&
    typeof error === "object" &&
    MISSING_CODES.has(String((error as NodeJS.ErrnoException).code))
  );
}

/** The error for a path that exists but cannot be read (EACCES, ELOOP, EIO, …), naming both. */
export function unreadableError(path: string, cause: unknown): InputError {
  const code = (cause as NodeJS.ErrnoException | undefined)?.code ?? "error";
  const reason = cause instanceof Error ? cause.message.replace(/^[A-Z]+: /, "") : String(cause);
  return new InputError(
    "core.file-unreadable",
    `cannot read it (${code}): ${reason}`,
    { file: path },
    {
      cause,
      data: { errno: code },
    },
  );
}

/** What a file-system call came to: its value, "nothing there", or "there but unreadable". */
export type FsOutcome<T> =
  | { readonly kind: "ok"; readonly value: T }
  | { readonly kind: "missing" }
  | { readonly kind: "unreadable"; readonly code: string; readonly error: unknown };

/** Run a file-system call and say which of the three it came to (for findings-style callers). */
export async function fsOutcome<T>(operation: Promise<T>): Promise<FsOutcome<T>> {
  try {
    return { kind: "ok", value: await operation };
  } catch (error) {
    if (isMissing(error)) return { kind: "missing" };
    return { kind: "unreadable", code: String((error as NodeJS.ErrnoException).code), error };
  }
}

/**
 * The result of a file-system call on `path`, or undefined when the path does not exist. Any
 * other failure (permission denied, a symlink loop, an I/O error) is an `InputError` with code
 * `core.file-unreadable`: a file that is there but unreadable must never pass for a missing one.
 */
export async function unlessMissing<T>(
  path: string,
  operation: Promise<T>,
): Promise<T | undefined> {
  const outcome = await fsOutcome(operation);
  if (outcome.kind === "ok") return outcome.value;
  if (outcome.kind === "missing") return undefined;
  throw unreadableError(path, outcome.error);
}

/** Whether something exists at `path` (following links); unreadable is an error, not "no". */
export async function pathExists(path: string): Promise<boolean> {
  return (await unlessMissing(path, stat(path))) !== undefined;
}
