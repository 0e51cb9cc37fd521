import type { Dirent } from "node:fs";
import { lstat, readdir, realpath, stat } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import { fsOutcome } from "../core/fs.js";
import type { LeveledFinding } from "./types.js";

/** Walking stops here: a skill is a handful of files, and a hostile tree must not hang us. */
export const MAX_SKILL_ENTRIES = 10_000;
export const MAX_SKILL_DEPTH = 32;

export type SkillEntryKind = "file" | "directory";

/** One file or folder inside a skill; `path` is relative to the skill root, with `/`. */
export interface SkillEntry {
  readonly path: string;
  readonly kind: SkillEntryKind;
  /** Bytes for files, 0 for folders. */
  readonly size: number;
  /** Set when the entry is a symbolic link (that resolves inside the skill). */
  readonly symlink?: boolean;
}

export interface SkillTree {
  readonly entries: SkillEntry[];
  readonly findings: LeveledFinding[];
}

/** True when `child` is `parent` or lies below it. Both must be absolute and resolved. */
export function isInside(parent: string, child: string): boolean {
  const path = relative(parent, child);
  return path === "" || (!path.startsWith(`..${sep}`) && path !== ".." && !isAbsoluteLike(path));
}

function isAbsoluteLike(path: string): boolean {
  // On Windows `relative` returns an absolute path across drives.
  return /^[a-zA-Z]:/.test(path) || path.startsWith(sep);
}

export function toPosix(path: string): string {
  return path.split(sep).join("/");
}

/**
 * List every entry of the skill folder `realRoot` (already passed through `realpath`) without
 * following links out of it. Links that leave the folder, broken links and special files
 * (FIFOs, sockets, devices, which would block or leak on read) become findings, not entries.
 * `displayRoot` is the path findings name.
 */
export async function walkSkillFolder(realRoot: string, displayRoot: string): Promise<SkillTree> {
  const entries: SkillEntry[] = [];
  const findings: LeveledFinding[] = [];
  let truncated = false;

  async function visit(directory: string, depth: number): Promise<void> {
    let children: Dirent[];
    try {
      children = await readdir(directory, { withFileTypes: true });
    } catch (error) {
      findings.push({
        level: "error",
        code: "unreadable",
        message: `cannot read folder: ${(error as Error).message}`,
        file: join(displayRoot, relative(realRoot, directory)),
      });
      return;
    }
    children.sort((left, right) => (left.name < right.name ? -1 : left.name > right.name ? 1 : 0));
    for (const child of children) {
      if (entries.length >= MAX_SKILL_ENTRIES) {
        truncated = true;
        return;
      }
      const absolute = join(directory, child.name);
      const relativePath = toPosix(relative(realRoot, absolute));
      const file = join(displayRoot, relativePath);
      if (child.isSymbolicLink()) {
        // A finding, not an exception, either way: a skill's broken link is the skill's problem.
        // But "points to nothing" only when nothing is there; a loop is named as a loop.
        const resolved = await fsOutcome(realpath(absolute));
        if (resolved.kind !== "ok") {
          findings.push({
            level: "warning",
            code: "symlink-broken",
            message:
              resolved.kind === "missing"
                ? "symbolic link points to nothing"
                : `symbolic link cannot be followed (${resolved.code})`,
            file,
          });
          continue;
        }
        const target = resolved.value;
        if (!isInside(realRoot, target)) {
          findings.push({
            level: "error",
            code: "symlink-outside",
            message: `symbolic link points outside the skill folder (to ${target}); installing the skill would copy that file`,
            file,
          });
          continue;
        }
        const targetStat = await stat(target);
        // A linked folder is listed but not entered: it is already inside and could loop.
        entries.push({
          path: relativePath,
          kind: targetStat.isDirectory() ? "directory" : "file",
          size: targetStat.isDirectory() ? 0 : targetStat.size,
          symlink: true,
        });
        continue;
      }
      if (child.isDirectory()) {
        entries.push({ path: relativePath, kind: "directory", size: 0 });
        if (depth + 1 >= MAX_SKILL_DEPTH) {
          findings.push({
            level: "error",
            code: "too-deep",
            message: `folders nested deeper than ${MAX_SKILL_DEPTH} levels are not read`,
            file,
          });
          continue;
        }
        await visit(absolute, depth + 1);
        continue;
      }
      if (child.isFile()) {
        const size = (await lstat(absolute)).size;
        entries.push({ path: relativePath, kind: "file", size });
        continue;
      }
      findings.push({
        level: "error",
        code: "special-file",
        message:
          "not a regular file, folder or link (a FIFO, socket or device); agents cannot use it",
        file,
      });
    }
  }

  await visit(realRoot, 0);
  if (truncated) {
    findings.push({
      level: "error",
      code: "too-many-files",
      message: `the skill folder holds more than ${MAX_SKILL_ENTRIES} entries; the rest were not read`,
      file: displayRoot,
    });
  }
  return { entries, findings };
}
