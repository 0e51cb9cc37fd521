/** Temporary folders and servers of a test file, released after each test. */
import { mkdtemp, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach } from "vitest";

export type Cleanup = () => Promise<void> | void;

/**
 * A list whose entries run after each test, the last pushed first; call it at a test file's top
 * level so vitest registers the hook for that file.
 */
export function cleanupsAfterEach(): Cleanup[] {
  const cleanups: Cleanup[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  return cleanups;
}

/** A new folder under the system temporary folder, removed by `cleanups`. */
export async function temporaryDirectoryIn(cleanups: Cleanup[], prefix: string): Promise<string> {
  const directory = await mkdtemp(join(tmpdir(), prefix));
  cleanups.push(() => rm(directory, { recursive: true, force: true }));
  return directory;
}

/**
 * A symbolic link to itself in `directory`: it is there, but every read of it fails with ELOOP,
 * for root too, so it stands for "exists but unreadable" where permissions cannot (tests run as
 * root in CI).
 */
export async function selfLoopingLink(directory: string, name: string): Promise<string> {
  const path = join(directory, name);
  await symlink(path, path);
  return path;
}
