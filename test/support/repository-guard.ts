/**
 * Vitest's global setup (vitest.config.ts): fails the run when the repository gained untracked
 * files while the tests ran. Tests write into their own temporary folders; a file that appears in
 * the checkout is a leak that a commit then takes in, as an empty `oom` did twice: conmon writes
 * one into its working folder when a container is killed at its memory limit (the container
 * tests of sandbox-backends and bench-run-limits do that on purpose), and the Podman service had
 * been started from the repository, so conmon's working folder was the repository root. Ignored
 * files (`test-output/`, `runs/`) are allowed: .gitignore says where leftovers may go.
 */
import { execFile } from "node:child_process";
import { resolve } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);
const root = resolve(import.meta.dirname, "..", "..");
/** Set once reported: each tier loads this file anew, but they share the process. */
const reportedKey = Symbol.for("skillsmith.repository-guard.reported");

/** Untracked, not ignored paths under `folder` (a git checkout), or undefined outside one. */
export async function untrackedFiles(folder: string): Promise<Set<string> | undefined> {
  try {
    const { stdout } = await run(
      "git",
      ["ls-files", "--others", "--exclude-standard", "--full-name", "-z"],
      { cwd: folder, maxBuffer: 64 * 1024 * 1024 },
    );
    return new Set(stdout.split("\0").filter((path) => path !== ""));
  } catch {
    return undefined;
  }
}

/** The paths in `after` that were not in `before`, sorted. */
export function newFiles(before: ReadonlySet<string>, after: ReadonlySet<string>): string[] {
  return [...after].filter((path) => !before.has(path)).sort();
}

/** What to say about files the run left in the checkout. */
export function leftFilesMessage(folder: string, left: readonly string[]): string {
  return [
    `the test run left ${left.length} untracked file(s) in ${folder}: ${left.join(", ")}`,
    "A test must write only into its own temporary folder. An empty `oom` comes from conmon when",
    "the Podman service runs with the repository as its working folder: start it from /",
    "(`cd / && podman system service ...`, as scripts/ci-containers.sh does).",
  ].join("\n");
}

export default async function setup(): Promise<(() => Promise<void>) | undefined> {
  const before = await untrackedFiles(root);
  // Not a git checkout (an unpacked package): nothing to compare against.
  if (before === undefined) return undefined;
  return async () => {
    const after = await untrackedFiles(root);
    if (after === undefined) return;
    const left = newFiles(before, after);
    // Every tier runs this teardown; one message is enough.
    const shared = globalThis as { [reportedKey]?: boolean };
    if (left.length === 0 || shared[reportedKey] === true) return;
    shared[reportedKey] = true;
    // Vitest only logs an error thrown here, with a stack that says nothing: the message and the
    // exit code are what a person and CI read.
    process.exitCode = 1;
    console.error(`\n${leftFilesMessage(root, left)}`);
  };
}
