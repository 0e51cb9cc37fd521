/**
 * Removing agent-skill folders from a prepared base's git history, not only from its working
 * tree. Deleting them from the tree alone left them in the index and in every commit: `git
 * status` listed them as deleted, `git checkout -- .` brought them back mid-run and `git log -p`
 * printed them, so the without-skill arm could read a skill the benchmark repository had
 * committed (Claude Code did, and announced it).
 *
 * The history from the pinned commit back is rewritten with git's own `fast-export` /
 * `fast-import` (one pass over the history, blobs by id, no file contents streamed): every file
 * operation on a path inside an agent-skill folder is dropped, commits keep their authors, dates
 * and messages. The caller prunes the old objects afterwards. git's `filter-branch` would do the
 * same with one process per commit (minutes on a large repository); `git filter-repo` is not part
 * of git.
 */
import { readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { skillFolderPatterns } from "../../skill/clean.js";
import { git, gitWithFiles } from "./git.js";

const DEFAULT_PATTERNS = skillFolderPatterns();

/**
 * Whether a repository path lies inside an agent-skill folder (`<agent folder>/skills/…` at any
 * depth), by the rule the working-tree clean-up uses: nothing below `node_modules` counts.
 * A quoted path (git quotes unusual names) is judged by its segments; the folder names are ASCII.
 */
export function isAgentSkillPath(
  path: string,
  patterns: readonly string[][] = DEFAULT_PATTERNS,
): boolean {
  const unquoted = path.startsWith('"') && path.endsWith('"') ? path.slice(1, -1) : path;
  const segments = unquoted.split("/");
  for (let index = 0; index + 1 < segments.length; index += 1) {
    const segment = segments[index] ?? "";
    if (segment === "node_modules" || segment === ".git") return false;
    const inside = (pattern: readonly string[]) =>
      index + pattern.length < segments.length &&
      pattern.every((part, offset) => segments[index + offset] === part);
    if (patterns.some(inside)) return true;
  }
  return false;
}

export interface HistoryRewrite {
  /** Commits reachable from HEAD that touched a skill folder (0: nothing was rewritten). */
  readonly commitsWithSkills: number;
  /** File operations dropped from the history (additions, changes and deletions). */
  readonly operationsDropped: number;
  /** The new HEAD commit (the old one when nothing was rewritten). */
  readonly head: string;
}

const LINE_FEED = 0x0a;

/**
 * Drops file operations on agent-skill paths from a `git fast-export --no-data` stream. Commit
 * messages (`data <bytes>`) are copied byte for byte; every other line passes unchanged.
 */
export function filterFastExport(
  stream: Buffer,
  patterns: readonly string[][] = DEFAULT_PATTERNS,
): { output: Buffer; dropped: number } {
  const parts: Buffer[] = [];
  let dropped = 0;
  let position = 0;
  while (position < stream.length) {
    let end = stream.indexOf(LINE_FEED, position);
    if (end === -1) end = stream.length;
    const line = stream.subarray(position, end).toString("utf8");
    const next = Math.min(end + 1, stream.length);
    if (line.startsWith("data ")) {
      const length = Number(line.slice(5));
      const stop = Math.min(next + length, stream.length);
      parts.push(stream.subarray(position, stop));
      position = stop;
      continue;
    }
    let drop = false;
    if (line.startsWith("M ")) {
      // M <mode> <dataref> <path>
      const afterMode = line.indexOf(" ", 2);
      const afterRef = afterMode === -1 ? -1 : line.indexOf(" ", afterMode + 1);
      drop = afterRef !== -1 && isAgentSkillPath(line.slice(afterRef + 1), patterns);
    } else if (line.startsWith("D ")) {
      drop = isAgentSkillPath(line.slice(2), patterns);
    }
    if (drop) dropped += 1;
    else parts.push(stream.subarray(position, next));
    position = next;
  }
  return { output: Buffer.concat(parts), dropped };
}

/**
 * Rewrites the history of `tree`'s detached HEAD without agent-skill folders, then points HEAD at
 * the rewritten commit and resets the index to it (the working tree, already cleaned, then
 * matches: `git status` is clean). Old objects stay until the caller prunes (`pruneToCommit`).
 * `scratch` is a folder for the export stream; `extraFolders` are cleared besides the agents'
 * own (see `skillFolderPatterns`).
 */
export async function removeSkillFoldersFromHistory(
  tree: string,
  scratch: string,
  extraFolders: readonly string[] = [],
): Promise<HistoryRewrite> {
  const head = (await git(["rev-parse", "HEAD"], { cwd: tree })).trim();
  const patterns = skillFolderPatterns(extraFolders);
  const pathspecs = patterns.map((parts) => `:(glob)**/${parts.join("/")}/**`);
  const touching = (await git(["rev-list", "HEAD", "--", ...pathspecs], { cwd: tree }))
    .split("\n")
    .filter((line) => line !== "");
  if (touching.length === 0) return { commitsWithSkills: 0, operationsDropped: 0, head };

  const ref = "refs/skillsmith/history";
  await git(["update-ref", ref, head], { cwd: tree });
  const exported = join(scratch, "history.export");
  const filtered = join(scratch, "history.import");
  try {
    // Through a file, so the stream's bytes (messages in any encoding) are never decoded.
    await gitWithFiles(
      ["fast-export", "--no-data", "--signed-tags=strip", "--reencode=yes", ref],
      { stdoutFile: exported },
      { cwd: tree },
    );
    const { output, dropped } = filterFastExport(await readFile(exported), patterns);
    await writeFile(filtered, output);
    await gitWithFiles(
      ["fast-import", "--quiet", "--force"],
      { stdinFile: filtered },
      { cwd: tree },
    );
    const rewritten = (await git(["rev-parse", ref], { cwd: tree })).trim();
    await git(["update-ref", "--no-deref", "HEAD", rewritten], { cwd: tree });
    await git(["update-ref", "-d", ref], { cwd: tree });
    // The index still lists the removed files; make it the rewritten HEAD's tree.
    await git(["read-tree", "HEAD"], { cwd: tree });
    // Only refreshes cached stat data so `git status` is quiet; the index content is already
    // right (read-tree above), so a failed refresh changes nothing that is read later.
    await git(["update-index", "-q", "--refresh"], { cwd: tree }).catch(() => "");
    return { commitsWithSkills: touching.length, operationsDropped: dropped, head: rewritten };
  } finally {
    await rm(exported, { force: true });
    await rm(filtered, { force: true });
  }
}
