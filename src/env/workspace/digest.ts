import { createHash } from "node:crypto";
import type { Dirent } from "node:fs";
import { lstat, readdir, readFile, readlink } from "node:fs/promises";
import { join } from "node:path";

export interface TreeDigestOptions {
  /** Relative paths (with `/` separators) to leave out, with everything below them. */
  readonly exclude?: (relativePath: string) => boolean;
}

/**
 * A SHA-256 over a folder's tree: every entry's relative path, type and permission bits, each
 * file's content and each symbolic link's target, in a fixed (code-unit sorted) order. Two
 * trees with the same digest are byte-identical as far as a program reading them can tell;
 * timestamps, owners and inode numbers are deliberately left out because they differ between
 * copies without changing what an agent sees.
 */
export async function treeDigest(root: string, options: TreeDigestOptions = {}): Promise<string> {
  const hash = createHash("sha256");
  const rootStat = await lstat(root);
  hash.update(`root ${(rootStat.mode & 0o7777).toString(8)}\0`);
  await digestBelow(root, "", hash, options);
  return hash.digest("hex");
}

async function digestBelow(
  directory: string,
  prefix: string,
  hash: ReturnType<typeof createHash>,
  options: TreeDigestOptions,
): Promise<void> {
  const entries: Dirent[] = await readdir(directory, { withFileTypes: true });
  entries.sort((left, right) => (left.name < right.name ? -1 : left.name > right.name ? 1 : 0));
  for (const entry of entries) {
    const relativePath = prefix === "" ? entry.name : `${prefix}/${entry.name}`;
    if (options.exclude?.(relativePath) === true) continue;
    const path = join(directory, entry.name);
    const info = await lstat(path);
    const mode = (info.mode & 0o7777).toString(8);
    if (info.isSymbolicLink()) {
      hash.update(`link ${mode} ${relativePath}\0${await readlink(path)}\0`);
    } else if (info.isDirectory()) {
      hash.update(`dir ${mode} ${relativePath}\0`);
      await digestBelow(path, relativePath, hash, options);
    } else if (info.isFile()) {
      const content = await readFile(path);
      hash.update(`file ${mode} ${relativePath} ${content.length}\0`);
      hash.update(content);
    } else {
      // Sockets, FIFOs and devices have no content to compare; their presence still counts.
      hash.update(`special ${mode} ${relativePath}\0`);
    }
  }
}
