import { lstat, readFile, realpath, rm, rmdir } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import { unlessMissing } from "../core/fs.js";
import { AGENT_INSTALL_DIRECTORY, installSkill, type SkillAgent } from "../skill/install.js";
import { parseSkillMarkdown, SKILL_FILE_NAME } from "../skill/parse.js";

export interface InstalledSkill {
  readonly name: string;
  readonly description: string;
  /** SKILL.md without its frontmatter. */
  readonly body: string;
  /** The installed copy, relative to the workspace, with `/` separators. */
  readonly relativePath: string;
  /**
   * Removes the installed copy and the folders the install created (when left empty), so the
   * workspace after a run holds only the agent's own changes.
   */
  uninstall(): Promise<void>;
}

/** A folder a harness reads a project's skills from (its registration's `skillFolders`). */
export interface SkillFolder {
  /** The harness's registered name (recorded as the install's agent). */
  readonly harness: string;
  /** Relative to the workspace, `/`-separated. */
  readonly folder: string;
}

/**
 * Validates the skill and installs a copy where `agent` discovers project skills (through
 * `src/skill`'s installer, which refuses invalid skills and name conflicts), then reads back
 * what a harness shows the model.
 */
export async function installSkillFor(
  agent: SkillAgent | SkillFolder,
  skillPath: string,
  workspace: string,
): Promise<InstalledSkill> {
  const root = await realpath(workspace);
  const folder = typeof agent === "string" ? AGENT_INSTALL_DIRECTORY[agent] : agent.folder;
  // Folders the install will create, outermost first (e.g. `.claude`, `.claude/skills`).
  const parts = folder.split("/");
  const created: string[] = [];
  for (let depth = 1; depth <= parts.length; depth += 1) {
    const folder = join(root, ...parts.slice(0, depth));
    if ((await unlessMissing(folder, lstat(folder))) === undefined) created.push(folder);
  }
  // The benchmark installs untrusted skills into a sandboxed workspace on purpose; their audit
  // is a report of its own, not a reason to refuse the run.
  const installed = await installSkill(skillPath, {
    agent: typeof agent === "string" ? agent : agent.harness,
    workspace,
    auditFailOn: "off",
    ...(typeof agent === "string" ? {} : { projectFolder: agent.folder }),
  });
  const file = join(installed.destination, SKILL_FILE_NAME);
  const parsed = parseSkillMarkdown(await readFile(file, "utf8"), file);
  const description = parsed.frontmatter?.description;
  return {
    name: installed.name,
    description: typeof description === "string" ? description : "",
    body: parsed.body,
    relativePath: relative(root, installed.destination).split(sep).join("/"),
    uninstall: async () => {
      if (installed.status === "installed") {
        await rm(installed.destination, { recursive: true, force: true });
      }
      for (const folder of [...created].reverse()) {
        // Not recursive: anything the agent put there stays. Best effort by design: a folder
        // that is not empty (or already gone) is left as it is, which is what we want.
        await rmdir(folder).catch(() => undefined);
      }
    },
  };
}

/** The skills installed for one run, removed together. */
export interface InstalledSkills {
  /** In installation order; a folder identical to one installed before is listed once. */
  readonly skills: readonly InstalledSkill[];
  /** Removes every copy (last installed first), leaving only the agent's own changes. */
  uninstall(): Promise<void>;
}

/**
 * Installs every folder of the skill under test (a suite skill may ship several). When one
 * cannot be installed, the ones already copied are removed before the error propagates, so a
 * refused request never leaves skills behind in the workspace.
 */
export async function installSkillsFor(
  agent: SkillAgent | SkillFolder,
  skillPaths: readonly string[],
  workspace: string,
): Promise<InstalledSkills> {
  const installed: InstalledSkill[] = [];
  const uninstall = async () => {
    // Reverse order: the first install recorded the folders it created, and removes them last.
    for (const skill of [...installed].reverse()) await skill.uninstall();
  };
  try {
    for (const skillPath of skillPaths) {
      const skill = await installSkillFor(agent, skillPath, workspace);
      if (!installed.some((earlier) => earlier.relativePath === skill.relativePath)) {
        installed.push(skill);
      }
    }
  } catch (error) {
    await uninstall();
    throw error;
  }
  return { skills: installed, uninstall };
}
