import { lstat, readdir } from "node:fs/promises";
import { join } from "node:path";
import { SKILL_FILE_NAME } from "./parse.js";

/**
 * The skill folders a path names: the path itself when it holds a `SKILL.md` (or is not a
 * folder at all, so that validation reports why), else its immediate subfolders that hold a
 * `SKILL.md`, sorted by name. A folder with neither is returned as itself, to be reported as
 * missing its `SKILL.md`.
 */
export async function findSkillFolders(path: string): Promise<string[]> {
  // Every failure here (missing or unreadable) falls back to `[path]` on purpose: validation of
  // that path then reads it and reports what is wrong, unreadable included, as a finding.
  const pathStat = await lstat(path).catch(() => undefined);
  if (pathStat === undefined) return [path];
  const own = await lstat(join(path, SKILL_FILE_NAME)).catch(() => undefined);
  if (own !== undefined) return [path];
  const entries = await readdir(path, { withFileTypes: true }).catch(() => undefined);
  if (entries === undefined) return [path];
  const children: string[] = [];
  for (const entry of entries.sort((left, right) => (left.name < right.name ? -1 : 1))) {
    if (!entry.isDirectory()) continue;
    const child = join(path, entry.name);
    if ((await lstat(join(child, SKILL_FILE_NAME)).catch(() => undefined)) !== undefined) {
      children.push(child);
    }
  }
  return children.length > 0 ? children : [path];
}
