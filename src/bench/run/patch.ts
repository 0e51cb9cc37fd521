/**
 * The final change an agent made, captured as a binary-safe git diff between the prepared base
 * and the workspace after the agent ran (before the verifier touches it), so `bench regrade`
 * can apply it to a fresh workspace and run another verifier without running the agent again.
 *
 * The workspace is untrusted: the agent may have rewritten its `.git` (config with hooks,
 * filters or an fsmonitor command). So git never reads it: a private repository outside the
 * workspace indexes both trees (`--git-dir`/`--work-tree`, a temporary index each), with no
 * system or global configuration, and git itself skips every `.git` entry of a work tree.
 * `.gitattributes` in the workspace can only name filters and diff drivers, and none is
 * configured in the private repository, so nothing the agent wrote is ever executed. Ignored
 * files are included (`add --force`): a `.gitignore` written by the agent must not hide a change.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { InfrastructureError } from "../../core/errors.js";
import { runProcess } from "../../core/process.js";
import { PATCH_LIMIT, type RunPatch } from "../store/results.js";

const GIT_TIMEOUT_MS = 120_000;

/** Environment for the private git: nothing from the caller's git set-up, no configuration files. */
function gitEnvironment(home: string, index: string): Record<string, string> {
  return {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: home,
    LC_ALL: "C",
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_INDEX_FILE: index,
    GIT_TERMINAL_PROMPT: "0",
  };
}

async function privateGit(
  gitDir: string,
  workTree: string,
  env: Record<string, string>,
  args: readonly string[],
  maxOutputBytes?: number,
): Promise<string> {
  const result = await runProcess(
    "git",
    [
      "--git-dir",
      gitDir,
      "--work-tree",
      workTree,
      "-c",
      "core.fsmonitor=false",
      "-c",
      "core.hooksPath=/dev/null",
      ...args,
    ],
    {
      cwd: gitDir,
      env,
      timeoutMs: GIT_TIMEOUT_MS,
      ...(maxOutputBytes === undefined ? {} : { maxOutputBytes }),
    },
  );
  if (result.spawnError !== undefined) throw result.spawnError;
  if (result.exitCode !== 0) {
    throw new InfrastructureError(
      "run.patch-git",
      `git ${args[0]} failed (${result.exitCode}): ${result.stderr.trim()}`,
    );
  }
  return result.stdout;
}

async function treeOf(gitDir: string, folder: string, home: string, index: string) {
  const env = gitEnvironment(home, index);
  await privateGit(gitDir, folder, env, ["add", "--all", "--force", "--", "."]);
  return (await privateGit(gitDir, folder, env, ["write-tree"])).trim();
}

/**
 * The diff from `base` to `workspace` (both host folders; `.git` left out), capped at
 * `limit` characters: a longer diff is kept cut and marked `truncated`, and cannot be re-applied.
 * `redact` is applied to the text (secrets the agent may have written into files).
 */
export async function captureWorkspacePatch(
  base: string,
  workspace: string,
  redact: (text: string) => string = (text) => text,
  limit = PATCH_LIMIT,
): Promise<RunPatch> {
  const scratch = await mkdtemp(join(tmpdir(), "skillsmith-patch-"));
  try {
    const gitDir = join(scratch, "git");
    const home = join(scratch, "home");
    const initEnv = gitEnvironment(home, join(scratch, "unused.index"));
    const init = await runProcess("git", ["init", "-q", "--bare", gitDir], {
      env: initEnv,
      timeoutMs: GIT_TIMEOUT_MS,
    });
    if (init.exitCode !== 0)
      throw new InfrastructureError("run.patch-git", `git init failed: ${init.stderr.trim()}`);
    const before = await treeOf(gitDir, base, home, join(scratch, "base.index"));
    const after = await treeOf(gitDir, workspace, home, join(scratch, "workspace.index"));
    const env = gitEnvironment(home, join(scratch, "workspace.index"));
    // `:<old mode> <new mode> <old> <new> <status>\t<path>` per changed path.
    const changes = (
      await privateGit(gitDir, workspace, env, [
        "diff-tree",
        "-r",
        "--no-renames",
        "--raw",
        before,
        after,
      ])
    )
      .split("\n")
      .filter((line) => line.startsWith(":"));
    const nested = changes
      .filter((line) => line.split(" ")[1] === "160000")
      .map((line) => line.split("\t")[1] ?? "");
    const raw = await privateGit(
      gitDir,
      workspace,
      env,
      ["diff", "--binary", "--no-renames", "--no-color", "--no-ext-diff", before, after],
      // One byte more than the limit tells a cut diff from one exactly at the limit.
      limit * 4 + 1,
    );
    const redactedText = redact(raw);
    const truncated = redactedText.length > limit;
    return {
      diff: truncated ? redactedText.slice(0, limit) : redactedText,
      length: raw.length,
      files: changes.length,
      truncated,
      redacted: redactedText !== raw,
      ...(nested.length === 0
        ? {}
        : {
            incomplete: `folders made into their own git repositories are recorded as commit ids, not their files: ${nested.slice(0, 5).join(", ")}`,
          }),
    };
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}
