import { execFileSync } from "node:child_process";
import { runProcess } from "../../src/core/process.js";

/**
 * A fixed identity, so tests and benchmarks make commits on machines with no git configuration.
 */
export const gitIdentity = {
  GIT_AUTHOR_NAME: "skillsmith-test",
  GIT_AUTHOR_EMAIL: "test@example.com",
  GIT_COMMITTER_NAME: "skillsmith-test",
  GIT_COMMITTER_EMAIL: "test@example.com",
};

/** Run git and return its stdout, trimmed; a failure throws with git's message. */
export async function git(cwd: string, ...args: string[]): Promise<string> {
  const result = await runProcess("git", args, { cwd, env: { ...process.env, ...gitIdentity } });
  if (result.exitCode !== 0) throw new Error(`git ${args.join(" ")}: ${result.stderr}`);
  return result.stdout.trim();
}

/** Synchronous git returning stdout exactly as printed (a patch keeps its final newline). */
export function gitSyncRaw(cwd: string, ...args: string[]): string {
  return execFileSync("git", args, {
    cwd,
    encoding: "utf8",
    env: { ...process.env, ...gitIdentity },
  });
}

/** Synchronous git returning stdout trimmed (commit ids, names). */
export function gitSync(cwd: string, ...args: string[]): string {
  return gitSyncRaw(cwd, ...args).trim();
}
