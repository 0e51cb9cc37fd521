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
      "skill.git-missing",
      `git could not be started: ${result.spawnError.message}`,
      {
        cause: result.spawnError,
      },
    );
  }
  if (result.exitCode !== 0) {
    throw new InfrastructureError(
      "skill.git-failed",
      `git ${args.join(" ")} failed (exit ${result.exitCode ?? result.signal}): ${result.stderr.trim()}`,
      { data: { args: [...args], cwd: options.cwd, stderr: result.stderr } },
    );
  }
  return result.stdout;
}

/**
 * Run git with its standard input read from `stdinFile` and/or its output written to
 * `stdoutFile`, byte for byte (streams such as `fast-export` may hold text in any encoding, which
 * a decoded string would damage). The redirection is the shell's; the paths are arguments, never
 * part of the script.
 */
export async function gitWithFiles(
  args: readonly string[],
  files: { readonly stdinFile?: string; readonly stdoutFile?: string },
  options: { cwd?: string; timeoutMs?: number } = {},
): Promise<void> {
  const script = `exec git "$@" <"\${SKILLSMITH_GIT_STDIN:-/dev/null}" >"\${SKILLSMITH_GIT_STDOUT:-/dev/null}"`;
  const result = await runProcess("sh", ["-c", script, "git", ...args], {
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    env: {
      ...process.env,
      ...quietGitEnvironment,
      ...(files.stdinFile === undefined ? {} : { SKILLSMITH_GIT_STDIN: files.stdinFile }),
      ...(files.stdoutFile === undefined ? {} : { SKILLSMITH_GIT_STDOUT: files.stdoutFile }),
    },
    timeoutMs: options.timeoutMs ?? 30 * 60_000,
  });
  if (result.spawnError !== undefined || result.exitCode !== 0) {
    throw new InfrastructureError(
      "skill.git-failed",
      `git ${args.join(" ")} failed (exit ${result.exitCode ?? result.signal}): ${result.stderr.trim() || result.spawnError?.message || ""}`,
      { data: { args: [...args], cwd: options.cwd, stderr: result.stderr } },
    );
  }
}
