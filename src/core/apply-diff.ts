/**
 * The one way skillsmith applies a diff to a workspace (`git apply`): recorded predictions, a
 * synthesised answer, a requirement's reference solution. Every caller gets the same guards, so
 * no path applies a patch with fewer of them.
 */
import { dirname } from "node:path";
import { runProcess } from "./process.js";

export interface ApplyDiffOptions {
  readonly signal?: AbortSignal;
  readonly timeoutMs?: number;
}

export interface ApplyDiffOutcome {
  readonly ok: boolean;
  /** git's own words: why the diff does not apply, or its warnings. */
  readonly message: string;
}

/**
 * Apply `diff` in `workspace` (a repository or a plain folder). The workspace is the top: without
 * `GIT_CEILING_DIRECTORIES` a workspace inside another repository (a cache under a checkout)
 * would take that repository's root, and the paths of the diff would land relative to it. No
 * system or global git configuration is read, so the host's settings cannot change the result.
 */
export async function applyDiff(
  workspace: string,
  diff: string,
  options: ApplyDiffOptions = {},
): Promise<ApplyDiffOutcome> {
  const env = {
    ...process.env,
    GIT_CEILING_DIRECTORIES: dirname(workspace),
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
  };
  const git = (args: readonly string[]) =>
    runProcess("git", ["apply", "--whitespace=nowarn", ...args, "-"], {
      cwd: workspace,
      env,
      input: diff,
      timeoutMs: options.timeoutMs ?? 60_000,
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
  // `git apply` is all or nothing by itself (no `--reject`): a diff with one failing hunk changes
  // no file, so no separate `--check` pass is needed.
  const applied = await git([]);
  if (applied.spawnError !== undefined) return { ok: false, message: applied.spawnError.message };
  return { ok: applied.exitCode === 0, message: applied.stderr.trim() };
}
