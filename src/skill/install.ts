import { randomBytes } from "node:crypto";
import {
  chmod,
  lstat,
  mkdir,
  readFile,
  readlink,
  realpath,
  rename,
  rm,
  stat,
  symlink,
  writeFile,
} from "node:fs/promises";
import { isAbsolute, join, relative, resolve } from "node:path";
import { InputError } from "../core/errors.js";
import { unlessMissing } from "../core/fs.js";
import { AGENTS, agentFolders, CANONICAL_PROJECT_FOLDER, canonicalGlobalFolder } from "./agents.js";
import { auditSkillFolder } from "./audit.js";
import { type AuditBaseline, applyBaseline, auditFails, findingFails } from "./baseline.js";
import { isInside, walkSkillFolder } from "./files.js";
import { formatFindingList } from "./format.js";
import type { AuditReport, AuditSeverity } from "./types.js";
import { checkSkillFolder, toValidationResult } from "./validate.js";

// Cleaning a workspace of agent-skill folders lives in `clean.ts`; importable from here as before.
export { AGENT_SKILL_DIRECTORIES, cleanAgentSkillFolders } from "./clean.js";

export type SkillAgent = "claude-code" | "codex" | "agents";

/** Where each agent discovers project skills, relative to the workspace root. */
export const AGENT_INSTALL_DIRECTORY: Readonly<Record<SkillAgent, string>> = {
  "claude-code": ".claude/skills",
  codex: ".agents/skills",
  agents: ".agents/skills",
};

export const SKILL_AGENTS: readonly SkillAgent[] = ["claude-code", "codex", "agents"];

export type InstallScope = "project" | "global";
export type InstallMode = "copy" | "symlink";

export interface InstallOptions {
  /** An id of `AGENTS` (`claude-code`, `codex`, `cursor`, …). */
  readonly agent: string;
  /** The project root; needed for project scope. */
  readonly workspace?: string;
  /** `project` (default): the agent's project folder; `global`: its folder below `home`. */
  readonly scope?: InstallScope;
  /** The home folder for global scope (the CLI passes `$HOME`). */
  readonly home?: string;
  /** Variables that move an agent's global folder (`CLAUDE_CONFIG_DIR`, `CODEX_HOME`, …). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /**
   * `copy` (default) copies the skill into the agent's folder. `symlink` copies it once into the
   * canonical folder (`.agents/skills`, or `~/.agents/skills`) and links the agent's folder to
   * that copy, so several agents share one copy that updates together.
   */
  readonly mode?: InstallMode;
  /**
   * The audit runs first and refuses a skill with a finding at or above this severity
   * (default `high`); `off` skips it (the benchmark runner installs untrusted skills into a
   * sandbox on purpose and reports their audit separately).
   */
  readonly auditFailOn?: AuditSeverity | "off";
  /** Install even when the audit fails (the report is still returned). */
  readonly allowFindings?: boolean;
  /**
   * Findings a reviewer accepted (`skill audit --write-baseline`): they are marked suppressed and
   * do not refuse the install; any other finding still does.
   */
  readonly baseline?: AuditBaseline;
  /** Replace a different skill of the same name (for `skill update`) instead of refusing. */
  readonly replace?: boolean;
  /**
   * Project scope only: the folder to install into, relative to the workspace, instead of the
   * agent's (a harness registered with its own `skillFolders`). Must stay inside the workspace.
   */
  readonly projectFolder?: string;
}

export interface InstallResult {
  readonly name: string;
  /** The installed skill folder (a link to the canonical copy in symlink mode). */
  readonly destination: string;
  /** `unchanged` when an identical copy was already there (installing is idempotent). */
  readonly status: "installed" | "unchanged";
  readonly agent?: string;
  readonly scope?: InstallScope;
  readonly mode?: InstallMode;
  /** The canonical copy a symlink points to. */
  readonly linkedTo?: string;
  /** The audit of the skill, when it ran. */
  readonly audit?: AuditReport;
}

/** Where `agent` discovers skills for `scope`: the folder skills are installed into. */
export async function agentSkillsFolder(options: InstallOptions): Promise<{
  readonly base: string;
  readonly folder: string;
  readonly relativeFolder: string | undefined;
}> {
  if (options.projectFolder !== undefined) return projectFolderTarget(options);
  const agent = agentFolders(options.agent);
  if (agent === undefined) {
    throw new InputError(
      "skill.agent-unknown",
      `unknown agent "${String(options.agent)}"; expected one of ${AGENTS.map((each) => each.id).join(", ")}`,
      { field: "agent" },
    );
  }
  if ((options.scope ?? "project") === "global") {
    if (options.home === undefined)
      throw new InputError("skill.home-unknown", "global scope needs a home folder ($HOME)", {
        field: "home",
      });
    const folder = agent.global(options.home, options.env ?? {});
    return { base: options.home, folder, relativeFolder: undefined };
  }
  const workspaceReal = await projectWorkspace(options);
  return {
    base: workspaceReal,
    folder: join(workspaceReal, agent.project),
    relativeFolder: agent.project,
  };
}

/** The workspace of a project-scope install, its real path; it must be an existing folder. */
async function projectWorkspace(options: InstallOptions): Promise<string> {
  if (options.workspace === undefined)
    throw new InputError("skill.workspace-missing", "project scope needs a workspace", {
      field: "into",
    });
  const workspaceReal = await unlessMissing(options.workspace, realpath(options.workspace));
  if (workspaceReal === undefined || !(await stat(workspaceReal)).isDirectory()) {
    throw new InputError("skill.workspace-not-directory", "workspace is not a directory", {
      file: options.workspace,
    });
  }
  return workspaceReal;
}

/** `agentSkillsFolder` for an explicit project folder: relative, no `..`, inside the workspace. */
async function projectFolderTarget(options: InstallOptions): Promise<{
  readonly base: string;
  readonly folder: string;
  readonly relativeFolder: string;
}> {
  const relativeFolder = options.projectFolder ?? "";
  const parts = relativeFolder.split("/");
  if (
    (options.scope ?? "project") !== "project" ||
    relativeFolder === "" ||
    isAbsolute(relativeFolder) ||
    parts.some((part) => part === "" || part === "." || part === "..")
  ) {
    throw new InputError(
      "skill.skill-folder-invalid",
      `skill folder ${JSON.stringify(relativeFolder)} must be a relative path inside the project (no "..", ".", empty or absolute parts)`,
      { field: "projectFolder" },
    );
  }
  const workspaceReal = await projectWorkspace(options);
  return { base: workspaceReal, folder: join(workspaceReal, ...parts), relativeFolder };
}

/**
 * Install a valid skill where `agent` discovers skills. The skill is audited first and refused
 * (`InputError` code `skill.skill-audit-failed`, the report in `data`) on a finding at or above
 * `auditFailOn` unless `allowFindings`. Refuses (`InputError`, exit 2) an invalid skill and a
 * different skill already installed under the same name; an identical one is left as it is. The
 * copy is staged beside the destination and renamed into place, so an agent never sees half a
 * skill.
 */
export async function installSkill(
  skillDir: string,
  options: InstallOptions,
): Promise<InstallResult> {
  const target = await agentSkillsFolder(options);
  const checked = await checkSkillFolder(skillDir);
  const result = toValidationResult(checked);
  const source = checked.loaded.realPath;
  if (!result.valid || checked.frontmatter === undefined || source === undefined) {
    throw new InputError(
      "skill.skill-invalid",
      `refusing to install an invalid skill:\n${formatFindingList(result.errors)}`,
      { file: skillDir },
      { data: { errors: result.errors } },
    );
  }
  const failOn = options.auditFailOn ?? "high";
  const audited = failOn === "off" ? undefined : await auditSkillFolder(skillDir);
  const audit =
    audited === undefined || options.baseline === undefined
      ? audited
      : applyBaseline([audited], options.baseline).reports[0];
  if (
    audit !== undefined &&
    failOn !== "off" &&
    auditFails(audit, failOn) &&
    options.allowFindings !== true
  ) {
    const failing = audit.findings.filter((finding) => findingFails(finding, failOn));
    throw new InputError(
      "skill.skill-audit-failed",
      `refusing to install: the audit found ${failing.length} finding${failing.length === 1 ? "" : "s"} at or above ${failOn} (review them, then accept them with --baseline <file> from skill audit --write-baseline, or pass --allow-findings to install anyway):\n${formatFindingList(failing)}`,
      { file: skillDir },
      { data: { audit } },
    );
  }
  const name = checked.frontmatter.name;
  const mode = options.mode ?? "copy";
  const scope = options.scope ?? "project";
  const extra = { agent: options.agent, scope, mode, ...(audit === undefined ? {} : { audit }) };
  const canonicalFolder =
    scope === "global"
      ? canonicalGlobalFolder(target.base)
      : join(target.base, CANONICAL_PROJECT_FOLDER);
  if (mode === "symlink" && resolve(canonicalFolder) !== resolve(target.folder)) {
    const canonical = await copyInto(source, name, canonicalFolder, target, options.replace);
    const linkStatus = await linkInto(canonical.destination, name, target);
    return {
      name,
      destination: join(await realFolder(target.folder, target), name),
      status:
        canonical.status === "unchanged" && linkStatus === "unchanged" ? "unchanged" : "installed",
      linkedTo: canonical.destination,
      ...extra,
    };
  }
  const copied = await copyInto(source, name, target.folder, target, options.replace);
  return { ...copied, ...extra };
}

/** The skills folder created and resolved; in project scope it must stay inside the workspace. */
async function realFolder(
  folder: string,
  target: { readonly base: string; readonly relativeFolder: string | undefined },
): Promise<string> {
  await mkdir(folder, { recursive: true });
  // A planted `.claude` symlink must not let an install write outside the workspace.
  const folderReal = await realpath(folder);
  if (target.relativeFolder !== undefined && !isInside(target.base, folderReal)) {
    throw new InputError(
      "skill.skills-folder-outside-workspace",
      `${relative(target.base, folder)} resolves outside the workspace (to ${folderReal})`,
      { file: folder },
    );
  }
  return folderReal;
}

async function copyInto(
  source: string,
  name: string,
  folder: string,
  target: { readonly base: string; readonly relativeFolder: string | undefined },
  replace = false,
): Promise<{ name: string; destination: string; status: "installed" | "unchanged" }> {
  const skillsRootReal = await realFolder(folder, target);
  const destination = join(skillsRootReal, name);
  const existing = await unlessMissing(destination, lstat(destination));
  if (existing !== undefined) {
    if (existing.isDirectory() && (await sameTree(source, destination))) {
      return { name, destination, status: "unchanged" };
    }
    if (replace && existing.isDirectory()) {
      // Stage the new copy, then swap: an agent sees the old skill or the new one, never neither.
      const suffix = randomBytes(6).toString("hex");
      const staging = join(skillsRootReal, `.${name}.install-${suffix}`);
      const retired = join(skillsRootReal, `.${name}.replaced-${suffix}`);
      try {
        await copyTree(source, staging);
        await rename(destination, retired);
        await rename(staging, destination);
      } finally {
        await rm(staging, { recursive: true, force: true });
        await rm(retired, { recursive: true, force: true });
      }
      return { name, destination, status: "installed" };
    }
    throw new InputError(
      "skill.skill-install-conflict",
      `a different skill named "${name}" is already installed there; remove it first or rename one of them`,
      { file: destination },
    );
  }
  const staging = join(skillsRootReal, `.${name}.install-${randomBytes(6).toString("hex")}`);
  try {
    await copyTree(source, staging);
    await rename(staging, destination);
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
  return { name, destination, status: "installed" };
}

/** A relative link `folder/name -> canonical`, so the pair can move together. */
async function linkInto(
  canonical: string,
  name: string,
  target: {
    readonly base: string;
    readonly folder: string;
    readonly relativeFolder: string | undefined;
  },
): Promise<"installed" | "unchanged"> {
  const folderReal = await realFolder(target.folder, target);
  const link = join(folderReal, name);
  const wanted = relative(folderReal, canonical);
  const existing = await unlessMissing(link, lstat(link));
  if (existing !== undefined) {
    if (existing.isSymbolicLink() && (await readlink(link)) === wanted) return "unchanged";
    throw new InputError(
      "skill.skill-install-conflict",
      `something named "${name}" is already installed there; remove it first`,
      { file: link },
    );
  }
  await symlink(wanted, link, "dir");
  return "installed";
}

/** Copy a validated skill: links inside it are copied as the files they point to. */
async function copyTree(sourceRoot: string, destinationRoot: string): Promise<void> {
  const tree = await walkSkillFolder(sourceRoot, sourceRoot);
  await mkdir(destinationRoot);
  for (const entry of tree.entries) {
    const from = join(sourceRoot, entry.path);
    const to = join(destinationRoot, entry.path);
    if (entry.kind === "directory") {
      await mkdir(to, { recursive: true });
      continue;
    }
    await writeFile(to, await readFile(from));
    // Keep scripts executable.
    await chmod(to, (await stat(from)).mode & 0o777);
  }
}

/** Same relative paths, kinds and file bytes. */
async function sameTree(left: string, right: string): Promise<boolean> {
  const [leftTree, rightTree] = await Promise.all([
    walkSkillFolder(left, left),
    walkSkillFolder(right, right),
  ]);
  if (rightTree.findings.length > 0) return false;
  const shape = (entries: typeof leftTree.entries): string =>
    entries.map((entry) => `${entry.kind}:${entry.path}`).join("\n");
  if (shape(leftTree.entries) !== shape(rightTree.entries)) return false;
  for (const entry of leftTree.entries) {
    if (entry.kind !== "file") continue;
    const [leftBytes, rightBytes] = await Promise.all([
      readFile(join(left, entry.path)),
      readFile(join(right, entry.path)),
    ]);
    if (!leftBytes.equals(rightBytes)) return false;
  }
  return true;
}
