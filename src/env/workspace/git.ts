import { InfrastructureError } from "../../core/errors.js";
import { type RunResult, runProcess } from "../../core/process.js";

/** Git must never stop to ask for credentials or open an editor: a prompt would hang a run. */
const quietGitEnvironment: Readonly<Record<string, string>> = {
  GIT_TERMINAL_PROMPT: "0",
  GIT_ASKPASS: "true",
  GIT_EDITOR: "true",
  GIT_CONFIG_NOSYSTEM: "1",
  LC_ALL: "C",
};

export interface GitOptions {
  readonly cwd?: string;
  readonly timeoutMs?: number;
  /** Written to git's stdin (e.g. `update-ref --stdin` instructions). */
  readonly input?: string;
}

/** Run git and return the raw result (for callers that interpret failures themselves). */
export function tryGit(args: readonly string[], options: GitOptions = {}): Promise<RunResult> {
  return runProcess("git", args, {
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    ...(options.input === undefined ? {} : { input: options.input }),
    env: { ...process.env, ...quietGitEnvironment },
    timeoutMs: options.timeoutMs ?? 30 * 60_000,
  });
}

/** Run git; a failure is an infrastructure error carrying git's own message. */
export async function git(args: readonly string[], options: GitOptions = {}): Promise<string> {
  const result = await tryGit(args, options);
  if (result.spawnError !== undefined) {
    throw new InfrastructureError(
      "git-missing",
      `git could not be started: ${result.spawnError.message}`,
      {
        cause: result.spawnError,
      },
    );
  }
  if (result.exitCode !== 0) {
    throw new InfrastructureError(
      "git-failed",
      `git ${args.join(" ")} failed (exit ${result.exitCode ?? result.signal}): ${result.stderr.trim()}`,
      { data: { args: [...args], cwd: options.cwd, stderr: result.stderr } },
    );
  }
  return result.stdout;
}
