/**
 * Cloning a git bundle, shallow ones included. `git clone <bundle>` refuses a bundle made from a
 * shallow repository (a depth-1 bundle holds the pinned commit without its parents: "remote did
 * not send all necessary objects"), yet such bundles are common — a shallow clone bundled to save
 * space, SWE-Skills-Bench's celery and MCP servers repositories. For those the objects are
 * unpacked as they are (`git bundle unbundle` checks no ancestry), every commit whose parents are
 * absent is recorded as a shallow boundary in `shallow` (what `git clone --depth` writes itself),
 * and the bundle's refs are set, so the result is an ordinary shallow repository.
 */
import { rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { RunResult } from "../../core/process.js";
import { git, tryGit } from "./git.js";

/** git's words when a clone or fetch lacks the ancestors of a commit it received. */
const missingAncestryPattern =
  /did not send all necessary objects|Failed to traverse parents|missing (?:commit|object)|shallow/i;

/**
 * Clone `bundle` into `target` (`--no-checkout`, or `--bare`), falling back to unpacking a
 * shallow bundle. Returns git's result of the plain clone when that fails for another reason.
 */
export async function cloneBundle(
  bundle: string,
  target: string,
  options: { bare?: boolean } = {},
): Promise<RunResult> {
  const cloned = await tryGit([
    "clone",
    "--quiet",
    options.bare === true ? "--bare" : "--no-checkout",
    "--",
    bundle,
    target,
  ]);
  if (cloned.exitCode === 0 || !missingAncestryPattern.test(cloned.stderr)) return cloned;
  try {
    await unbundleShallow(bundle, target, options.bare === true);
  } catch (error) {
    // Not a shallow bundle after all (or not a bundle): git's own refusal is the better report.
    await rm(target, { recursive: true, force: true });
    return { ...cloned, stderr: `${cloned.stderr.trim()}\n${String(error)}` };
  }
  return { ...cloned, exitCode: 0, stderr: "" };
}

async function unbundleShallow(bundle: string, target: string, bare: boolean): Promise<void> {
  await git(["init", "--quiet", ...(bare ? ["--bare"] : []), "--", target]);
  const gitDirectory = bare ? target : join(target, ".git");
  const heads = (await git(["bundle", "unbundle", bundle], { cwd: target }))
    .split("\n")
    .map((line) => /^([0-9a-f]{40,64})\s+(\S+)$/.exec(line.trim()))
    .filter((match): match is RegExpExecArray => match !== null)
    .map(([, commit, ref]) => ({ commit: commit as string, ref: ref as string }));
  // Written before any ref is set: git will not walk a commit's history past the boundary.
  const boundary = await shallowBoundary(target);
  await writeFile(join(gitDirectory, "shallow"), boundary.map((commit) => `${commit}\n`).join(""));
  const head = heads.find((entry) => entry.ref === "HEAD")?.commit;
  for (const { commit, ref } of heads) {
    if (!ref.startsWith("refs/")) continue;
    await git(["update-ref", ref, commit], { cwd: target });
    // A working clone also gets the remote-tracking names `git clone` gives it.
    if (!bare && ref.startsWith("refs/heads/")) {
      await git(["update-ref", ref.replace(/^refs\/heads\//, "refs/remotes/origin/"), commit], {
        cwd: target,
      });
    }
  }
  const branch = heads.find(
    (entry) => entry.ref.startsWith("refs/heads/") && entry.commit === head,
  );
  if (branch !== undefined) await git(["symbolic-ref", "HEAD", branch.ref], { cwd: target });
  else if (head !== undefined)
    await git(["update-ref", "--no-deref", "HEAD", head], { cwd: target });
}

/** Commits present in the repository whose parents are not: the shallow boundary. */
async function shallowBoundary(repository: string): Promise<string[]> {
  const objects = await git(
    ["cat-file", "--batch-all-objects", "--batch-check=%(objectname) %(objecttype)"],
    { cwd: repository },
  );
  const commits = objects
    .split("\n")
    .map((line) => line.split(" "))
    .filter(([, type]) => type === "commit")
    .map(([name]) => name as string);
  const present = new Set(commits);
  // `--no-walk` prints each commit with its parents' names without visiting the parents.
  const lines = await git(["rev-list", "--no-walk=unsorted", "--parents", "--stdin"], {
    cwd: repository,
    input: commits.map((commit) => `${commit}\n`).join(""),
  });
  return lines
    .split("\n")
    .map((line) => line.trim().split(" "))
    .filter(([name, ...parents]) => name !== "" && parents.some((parent) => !present.has(parent)))
    .map(([name]) => name as string);
}
