import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { runProcess } from "../../core/process.js";
import { cloneBundle } from "../../env/workspace/bundle.js";
import type { SuiteRepository } from "./types.js";

/** Whether a pinned commit exists: checked, missing (with git's words), or not checkable here. */
export type CommitCheck =
  | { readonly status: "present" }
  | { readonly status: "missing"; readonly message: string }
  | { readonly status: "unchecked"; readonly message: string };

const quietGit = {
  GIT_TERMINAL_PROMPT: "0",
  GIT_ASKPASS: "true",
  GIT_CONFIG_NOSYSTEM: "1",
  LC_ALL: "C",
};

function git(args: readonly string[], cwd?: string) {
  return runProcess("git", args, {
    ...(cwd === undefined ? {} : { cwd }),
    env: { ...process.env, ...quietGit },
    timeoutMs: 10 * 60_000,
  });
}

async function hasCommit(gitDirectory: string, commit: string): Promise<boolean> {
  const result = await git(["--git-dir", gitDirectory, "cat-file", "-e", `${commit}^{commit}`]);
  return result.exitCode === 0;
}

/**
 * Checks pinned commits without preparing anything: a local repository is asked directly; a
 * bundle is unbundled once into a temporary bare repository (shared by every skill pinning the
 * same bundle); a remote repository is not contacted (validation stays offline) and is reported
 * as unchecked — `bench check` clones it and reports a missing commit there.
 */
export class CommitChecker {
  private readonly bundles = new Map<string, Promise<string | { error: string }>>();
  private readonly scratch: string[] = [];

  async check(repository: SuiteRepository): Promise<CommitCheck> {
    const { source, commit } = repository;
    let gitDirectory: string;
    let described: string;
    if (source.kind === "bundle") {
      described = `bundle ${source.path}`;
      const unbundled = await this.unbundle(source.path);
      if (typeof unbundled !== "string") return { status: "missing", message: unbundled.error };
      gitDirectory = unbundled;
    } else if (source.kind === "path" || source.url.startsWith("file:")) {
      const path = source.kind === "path" ? source.path : fileURLToPath(source.url);
      described = `repository ${path}`;
      const found = await git(["rev-parse", "--absolute-git-dir"], path);
      if (found.exitCode !== 0) {
        return {
          status: "missing",
          message: `${path} is not a git repository (${found.stderr.trim() || "git rev-parse failed"})`,
        };
      }
      gitDirectory = found.stdout.trim();
    } else {
      return {
        status: "unchecked",
        message: `commit ${commit} of ${source.url} not checked: remote repositories are not contacted by validation (bench check clones them)`,
      };
    }
    if (await hasCommit(gitDirectory, commit)) return { status: "present" };
    return {
      status: "missing",
      message: `commit ${commit} does not exist in ${described}: the pinned commit is unreachable — fix: pin a commit the repository has, or point at a copy (--repo-root, a fuller clone or bundle) that holds it`,
    };
  }

  private unbundle(path: string): Promise<string | { error: string }> {
    let pending = this.bundles.get(path);
    if (pending === undefined) {
      pending = (async () => {
        const folder = await mkdtemp(join(tmpdir(), "skillsmith-bundle-"));
        this.scratch.push(folder);
        // A shallow (depth-1) bundle is unpacked as a shallow repository, not refused.
        const cloned = await cloneBundle(path, folder, { bare: true });
        if (cloned.exitCode !== 0) {
          return { error: `not a readable git bundle: ${path} (${cloned.stderr.trim()})` };
        }
        return folder;
      })();
      this.bundles.set(path, pending);
    }
    return pending;
  }

  /** Remove the temporary repositories. */
  async close(): Promise<void> {
    await Promise.all(this.scratch.map((folder) => rm(folder, { recursive: true, force: true })));
    this.scratch.length = 0;
    this.bundles.clear();
  }
}
