/**
 * How a verifier's folder is shown to the sandbox while it runs: the whole folder read-only, and
 * only the one report the verifier names inside it writable. Suite verifiers (their own copy at
 * their mount path, `src/bench/run/verifier-layout.ts`) and `runVerifier` (its files' folders
 * inside the workspace, `run.ts`) both mount through here, so the two cannot drift apart.
 *
 * Why the folder and not each file: Python and pytest look beside a test file for what it
 * imports and for `conftest.py`, and a package folder wins over a module of the same name. With
 * only the files read-only, code under test could add `expected/__init__.py` beside the
 * verifier's `expected.py`, a `conftest.py` in a folder collected later, or a `.pyc`, and the
 * verifier would load it as its own (where the tripwire also takes it for trusted code).
 */
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join, posix } from "node:path";
import type { Mount } from "../sandbox/types.js";

export interface VerifierFolder {
  /** The folder on the host. */
  readonly hostPath: string;
  /** Where the sandbox shows it. */
  readonly sandboxPath: string;
}

/**
 * The mounts for `folder`: read-only, then `report` (relative to the folder; an XML file, else a
 * folder such as Surefire's) writable over it. The report is created empty first: a bind mount
 * needs something to mount over, and an empty file is no report (`readJunitReports` reads none
 * from it), so nothing stale or planted can pass for this run's.
 */
export async function readOnlyVerifierFolder(
  folder: VerifierFolder,
  report?: string,
): Promise<Mount[]> {
  const mounts: Mount[] = [{ ...folder, readOnly: true }];
  if (report === undefined || report === "") return mounts;
  const host = join(folder.hostPath, report);
  if (report.endsWith(".xml")) {
    await mkdir(dirname(host), { recursive: true });
    await writeFile(host, "", { flag: "a" });
  } else {
    await mkdir(host, { recursive: true });
  }
  mounts.push({
    hostPath: host,
    sandboxPath: posix.join(folder.sandboxPath, report),
    readOnly: false,
  });
  return mounts;
}

/**
 * The folders that hold a verifier's files (`/`-separated, relative to the workspace), without
 * the workspace root and without folders inside another one of the list: `tests/unit/test_a.py`
 * and `tests/helpers.py` give `tests`. Files at the root are left out: the root holds the
 * deliverable, so it cannot be made read-only.
 */
export function verifierFolders(files: readonly string[]): string[] {
  const folders = [...new Set(files.map((file) => posix.dirname(file)))]
    .filter((folder) => folder !== ".")
    .sort();
  return folders.filter(
    (folder) => !folders.some((other) => other !== folder && folder.startsWith(`${other}/`)),
  );
}
