import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { InfrastructureError } from "../core/errors.js";
import { isMissing } from "../core/fs.js";

/**
 * Reading the host's own bookkeeping files (cgroup counters, `/proc`, a limits report the sandbox
 * wrote): absent is an answer ("no such group", "nothing was recorded"), but a file that is there
 * and cannot be read is a broken host, not a zero. Counters read as zero would hide an OOM kill
 * or a process-limit hit from the verdict, so anything but ENOENT/ENOTDIR is an
 * `InfrastructureError` naming the file. (User files go through `unlessMissing` in core/fs.ts,
 * which raises an `InputError` instead: there the user can fix the file.)
 */
export async function readSystemFile(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw systemFileError(path, error);
  }
}

/** `readSystemFile` for the synchronous probes (cgroup layout detection, `/proc/<pid>/stat`). */
export function readSystemFileSync(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw systemFileError(path, error);
  }
}

function systemFileError(path: string, cause: unknown): InfrastructureError {
  const code = (cause as NodeJS.ErrnoException | undefined)?.code ?? "error";
  return new InfrastructureError(
    "env.system-file-unreadable",
    `${path}: cannot read it (${code}): ${cause instanceof Error ? cause.message : String(cause)}`,
    { cause, data: { file: path, errno: code } },
  );
}
