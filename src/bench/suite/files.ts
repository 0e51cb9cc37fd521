/**
 * File-system questions the suite loader and the importers ask: what is at a path, which
 * entries a folder has, and the order names are listed in. "Nothing there" (ENOENT, ENOTDIR) is
 * an answer; anything else (a symlink loop, permission denied, an I/O error) is an `InputError`
 * naming the path, so an unreadable file never passes for a missing one.
 */
import type { Dirent } from "node:fs";
import { readdir, stat } from "node:fs/promises";
import { unlessMissing } from "../../core/fs.js";

export type PathKind = "file" | "directory" | "missing" | "other";

/** What is at `path` (following links): a file, a folder, nothing, or something else. */
export async function pathKind(path: string): Promise<PathKind> {
  const info = await unlessMissing(path, stat(path));
  if (info === undefined) return "missing";
  if (info.isFile()) return "file";
  if (info.isDirectory()) return "directory";
  return "other";
}

/** The entries of folder `path`, unsorted; none when the folder does not exist. */
export async function folderEntries(path: string): Promise<Dirent[]> {
  return (await unlessMissing(path, readdir(path, { withFileTypes: true }))) ?? [];
}

/** The entry names of folder `path` in natural order; none when the folder does not exist. */
export async function folderNames(path: string): Promise<string[]> {
  return ((await unlessMissing(path, readdir(path))) ?? []).sort(naturalCompare);
}

/** The visible subfolders of `path` (no dot-folders), in natural order; none when it is missing. */
export async function subfolders(path: string): Promise<string[]> {
  return (await folderEntries(path))
    .filter((entry) => entry.isDirectory() && !entry.name.startsWith("."))
    .map((entry) => entry.name)
    .sort(naturalCompare);
}

/**
 * `batch2` before `batch10`: runs of digits compare as numbers, everything else by code point
 * (not by locale, so the order is the same on every machine).
 */
export function naturalCompare(left: string, right: string): number {
  const leftParts = left.match(/\d+|\D+/g) ?? [];
  const rightParts = right.match(/\d+|\D+/g) ?? [];
  for (let index = 0; index < Math.min(leftParts.length, rightParts.length); index++) {
    const a = leftParts[index] as string;
    const b = rightParts[index] as string;
    if (a === b) continue;
    if (/^\d/.test(a) && /^\d/.test(b)) {
      const difference = Number(a) - Number(b);
      if (difference !== 0) return difference;
    }
    return a < b ? -1 : 1;
  }
  return leftParts.length - rightParts.length;
}
