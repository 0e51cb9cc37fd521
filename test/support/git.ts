import { execFileSync } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
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

/**
 * A git repository at `folder` holding `files` (relative path → text) in one commit on `main`:
 * the untouched tree a test prepares an environment or runs a verifier on.
 */
export async function committedRepository(
  folder: string,
  files: Readonly<Record<string, string>>,
): Promise<string> {
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(folder, path)), { recursive: true });
    await writeFile(join(folder, path), text);
  }
  await git(folder, "init", "-q", "-b", "main");
  await git(folder, "add", "-A");
  await git(folder, "-c", "commit.gpgsign=false", "commit", "-q", "-m", "init");
  return folder;
}
