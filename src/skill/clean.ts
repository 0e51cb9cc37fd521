/**
 * Cleaning a workspace of every agent-skill folder, so a with/without-skill comparison exposes
 * only the skill under test (protocol A.4). `install.ts` re-exports both names.
 */
import type { Dirent } from "node:fs";
import { lstat, readdir, rm, stat } from "node:fs/promises";
import { join, resolve } from "node:path";
import { InputError } from "../core/errors.js";
import { unlessMissing } from "../core/fs.js";

/**
 * Project-level folders in which coding agents discover skills, relative to any directory of a
 * workspace. Sources, read 2026-11: the Claude Code docs (`.claude/skills`); the OpenCode docs
 * (`.opencode/skills`, plus `.claude/skills` and `.agents/skills`); the Cursor docs
 * (`.cursor/skills`); the Gemini CLI docs (`.gemini/skills`); the agent table of the
 * `skills` installer CLI (vercel-labs/skills, `src/agents.ts`), which gives Codex
 * `.codex/skills`, GitHub Copilot `.github/skills`, Amp and Kimi `.agents/skills`, Antigravity
 * `.agent/skills`, Windsurf `.windsurf/skills`, Goose `.goose/skills`, Droid `.factory/skills`
 * and the rest below. Codex itself reads `.agents/skills` (machine notes). One entry of that
 * table is left out on purpose: Moltbot's bare `skills/`, because a project's own `skills/`
 * folder is usually its content (this repository's `examples/skills`, for one), not an agent's.
 * A with/without-skill comparison is only fair when none of these survives in the workspace.
 */
export const AGENT_SKILL_DIRECTORIES: readonly string[] = [
  ".claude/skills",
  ".agents/skills",
  ".agent/skills",
  ".codex/skills",
  ".cursor/skills",
  ".github/skills",
  ".opencode/skills",
  ".gemini/skills",
  ".windsurf/skills",
  ".goose/skills",
  ".factory/skills",
  ".cline/skills",
  ".codebuddy/skills",
  ".commandcode/skills",
  ".continue/skills",
  ".crush/skills",
  ".junie/skills",
  ".kilocode/skills",
  ".kiro/skills",
  ".kode/skills",
  ".mcpjam/skills",
  ".mux/skills",
  ".neovate/skills",
  ".openclaude/skills",
  ".openhands/skills",
  ".pi/skills",
  ".pochi/skills",
  ".qoder/skills",
  ".qwen/skills",
  ".roo/skills",
  ".trae/skills",
  ".zencoder/skills",
];

/** Folders never searched: dependencies and version-control internals are not the project's. */
const SKIPPED_DIRECTORIES: ReadonlySet<string> = new Set(["node_modules", ".git"]);

/**
 * The folders to clear, as path segments: every agent's (`AGENT_SKILL_DIRECTORIES`) and `extra`,
 * the folders a harness registered by a program reads skills from (its `skillFolders`, relative
 * and `/`-separated), so a repository's own skills for that harness are cleared too.
 */
export function skillFolderPatterns(extra: readonly string[] = []): readonly string[][] {
  const folders = [...new Set([...AGENT_SKILL_DIRECTORIES, ...extra])];
  return folders.map((folder) => folder.split("/").filter((part) => part !== ""));
}

/**
 * Remove every agent-skill folder (see `AGENT_SKILL_DIRECTORIES`, plus `extraFolders`, see
 * `skillFolderPatterns`) found anywhere under
 * `workspace`, nested ones included, without descending into `node_modules`, `.git` or
 * symbolic links. A symlinked skills folder is removed as a link; its target is left alone,
 * because it lies outside what we were asked to clean. For the same reason an agent folder
 * that is itself a link (`.claude -> elsewhere`) is not followed. Returns the removed paths,
 * sorted.
 */
export async function cleanAgentSkillFolders(
  workspace: string,
  extraFolders: readonly string[] = [],
): Promise<string[]> {
  const root = resolve(workspace);
  const rootStat = await unlessMissing(workspace, stat(root));
  if (rootStat === undefined || !rootStat.isDirectory()) {
    throw new InputError("skill.workspace-not-directory", "workspace is not a directory", {
      file: workspace,
    });
  }
  const removed: string[] = [];
  await cleanBelow(root, skillFolderPatterns(extraFolders), removed);
  return removed.sort();
}

async function cleanBelow(
  directory: string,
  patterns: readonly string[][],
  removed: string[],
): Promise<void> {
  // A folder gone since its parent was listed holds nothing; one that cannot be read may still
  // hold skills an agent (root in a container, say) can read, so it is an error, not "clean".
  const entries: Dirent[] =
    (await unlessMissing(directory, readdir(directory, { withFileTypes: true }))) ?? [];
  for (const entry of entries) {
    if (!entry.isDirectory() || SKIPPED_DIRECTORIES.has(entry.name)) continue;
    const child = join(directory, entry.name);
    let gone = false;
    for (const [first, ...rest] of patterns) {
      if (first !== entry.name || !(await realFolders(child, rest.slice(0, -1)))) continue;
      const skills = join(child, ...rest);
      const skillsStat = await unlessMissing(skills, lstat(skills));
      if (skillsStat !== undefined) {
        await rm(skills, { recursive: true, force: true });
        removed.push(skills);
        gone ||= rest.length === 0;
      }
    }
    if (!gone) await cleanBelow(child, patterns, removed);
  }
}

/**
 * Whether each of `parts` below `directory` is a folder and not a link: a longer registered
 * folder (`.tool/config/skills`) is only followed through real folders, so a repository's link
 * (`.tool/config -> /home/user`) cannot point the removal outside the workspace.
 */
async function realFolders(directory: string, parts: readonly string[]): Promise<boolean> {
  let path = directory;
  for (const part of parts) {
    path = join(path, part);
    const status = await unlessMissing(path, lstat(path));
    if (status === undefined || !status.isDirectory()) return false;
  }
  return true;
}
