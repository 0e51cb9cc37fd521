/**
 * Skills managed from git against a lock file: `add` (resolve, check out, audit, install, lock),
 * `list`, `remove`, `check` (local drift and upstream updates) and `update` (re-pin to the
 * ref's current commit). Project scope keeps the lock in the project (`skillsmith-lock.json`),
 * global scope below the user's state folder.
 *
 * One file (~430 lines) on purpose: the five commands are one workflow over one lock file and
 * share its private helpers (install targets, the copies of an entry, the source of an entry);
 * git, auditing, installing and the lock format are already modules of their own.
 */

import { lstat, rm } from "node:fs/promises";
import { join } from "node:path";
import { InputError } from "../core/errors.js";
import { unlessMissing } from "../core/fs.js";
import { AGENTS } from "./agents.js";
import { auditSkillFolder } from "./audit.js";
import { auditFails, findingFails } from "./baseline.js";
import { formatFindingList } from "./format.js";
import {
  checkoutCommit,
  findSkillsInCheckout,
  type GitOptions,
  parseSkillSource,
  resolveRemoteCommit,
  type SkillSource,
  skillContentHash,
} from "./git-source.js";
import {
  agentSkillsFolder,
  type InstallMode,
  type InstallResult,
  type InstallScope,
  installSkill,
} from "./install.js";
import { globalLockFile, type LockEntry, PROJECT_LOCK_FILE, readLock, writeLock } from "./lock.js";
import type { AuditSeverity } from "./types.js";

export interface ManageOptions extends GitOptions {
  readonly scope: InstallScope;
  /** Project root (project scope). */
  readonly workspace?: string;
  /** Home folder (global scope, and where agents' global folders lie). */
  readonly home?: string;
  readonly cwd?: string;
}

export function lockFileOf(options: ManageOptions): string {
  if (options.scope === "global") {
    if (options.home === undefined)
      throw new InputError("skill.home-unknown", "global scope needs a home folder ($HOME)", {
        field: "home",
      });
    return globalLockFile(options.home, options.env ?? {});
  }
  if (options.workspace === undefined)
    throw new InputError("skill.workspace-missing", "project scope needs a workspace", {
      field: "into",
    });
  return join(options.workspace, PROJECT_LOCK_FILE);
}

function installTarget(options: ManageOptions, agent: string) {
  return {
    agent,
    scope: options.scope,
    ...(options.workspace === undefined ? {} : { workspace: options.workspace }),
    ...(options.home === undefined ? {} : { home: options.home }),
    ...(options.env === undefined ? {} : { env: options.env }),
  };
}

export interface AddOptions extends ManageOptions {
  readonly skills?: readonly string[];
  readonly agents: readonly string[];
  readonly mode?: InstallMode;
  readonly failOn?: AuditSeverity;
  readonly allowFindings?: boolean;
}

export interface AddedSkill {
  readonly name: string;
  readonly path: string;
  readonly commit: string;
  readonly contentHash: string;
  readonly installs: InstallResult[];
}

export interface AddResult {
  readonly source: string;
  readonly url: string;
  readonly ref: string | null;
  readonly commit: string;
  readonly lockFile: string;
  readonly skills: AddedSkill[];
  /** Skills the repository holds, for a user who did not pick any. */
  readonly available: string[];
}

function checkAgents(agents: readonly string[]): void {
  if (agents.length === 0)
    throw new InputError(
      "skill.agent-missing",
      `name at least one --agent: ${AGENTS.map((agent) => agent.id).join(", ")}`,
      {
        field: "agent",
      },
    );
}

/**
 * Install skills of a git source: resolve the ref to a commit, check it out into the cache,
 * pick the named skills (all when none is named), audit and install each for every agent, and
 * record source, commit and content hash in the lock. Nothing is installed or locked when a
 * named skill is missing or any audit fails (unless `allowFindings`).
 */
export async function addSkills(spec: string, options: AddOptions): Promise<AddResult> {
  checkAgents(options.agents);
  const source = parseSkillSource(spec, options.cwd);
  const lockFile = lockFileOf(options);
  const lock = await readLock(lockFile);
  const commit = await resolveRemoteCommit(source, options);
  const checkout = await checkoutCommit(source, commit, options);
  const found = await findSkillsInCheckout(checkout);
  const wanted = options.skills ?? [];
  const missing = wanted.filter(
    (name) => !found.some((skill) => skill.name === name || skill.path.split("/").at(-1) === name),
  );
  if (missing.length > 0 || found.length === 0)
    throw new InputError(
      "skill.skill-not-in-source",
      found.length === 0
        ? `${source.source} at ${commit.slice(0, 12)} holds no skill (no SKILL.md found)`
        : `${source.source} at ${commit.slice(0, 12)} has no skill named ${missing.join(", ")}; it has ${found.map((skill) => skill.name).join(", ")}`,
      { field: "skill" },
    );
  const picked =
    wanted.length === 0
      ? found
      : found.filter(
          (skill) =>
            wanted.includes(skill.name) || wanted.includes(skill.path.split("/").at(-1) ?? ""),
        );
  for (const skill of picked) {
    const existing = lock.skills[skill.name];
    if (existing !== undefined && existing.url !== source.url)
      throw new InputError(
        "skill.skill-lock-conflict",
        `a skill named "${skill.name}" is already locked from ${existing.source}; remove it first`,
        { file: lockFile, field: `skills.${skill.name}` },
      );
  }
  // Audit every picked skill before installing any, so a failing one leaves nothing half-added.
  const failOn = options.failOn ?? "high";
  if (options.allowFindings !== true) {
    for (const skill of picked) {
      const report = await auditSkillFolder(skill.folder);
      if (!auditFails(report, failOn)) continue;
      const failing = report.findings.filter((finding) => findingFails(finding, failOn));
      throw new InputError(
        "skill.skill-audit-failed",
        `refusing to add ${skill.name}: the audit found ${failing.length} finding${failing.length === 1 ? "" : "s"} at or above ${failOn} (review them, then pass --allow-findings to add anyway):\n${formatFindingList(failing)}`,
        { file: skill.folder },
        { data: { audit: report } },
      );
    }
  }
  const added: AddedSkill[] = [];
  const now = new Date().toISOString();
  for (const skill of picked) {
    const installs: InstallResult[] = [];
    for (const agent of options.agents) {
      installs.push(
        await installSkill(skill.folder, {
          ...installTarget(options, agent),
          mode: options.mode ?? "copy",
          ...(options.failOn === undefined ? {} : { auditFailOn: options.failOn }),
          ...(options.allowFindings === undefined ? {} : { allowFindings: options.allowFindings }),
          replace: lock.skills[skill.name] !== undefined,
        }),
      );
    }
    const contentHash = await skillContentHash(skill.folder);
    const previous = lock.skills[skill.name];
    lock.skills[skill.name] = {
      source: source.source,
      url: source.url,
      ref: source.ref ?? null,
      commit,
      path: skill.path,
      contentHash,
      agents: [...new Set([...(previous?.agents ?? []), ...options.agents])].sort(),
      mode: options.mode ?? "copy",
      installedAt: previous?.installedAt ?? now,
      updatedAt: now,
    };
    added.push({ name: skill.name, path: skill.path, commit, contentHash, installs });
  }
  await writeLock(lockFile, lock);
  return {
    source: source.source,
    url: source.url,
    ref: source.ref ?? null,
    commit,
    lockFile,
    skills: added,
    available: found.map((skill) => skill.name),
  };
}

export interface InstalledCopy {
  readonly agent: string;
  readonly path: string;
  /** `missing`: not there; `modified`: its content hash differs from the lock's. */
  readonly state: "ok" | "modified" | "missing";
  readonly contentHash?: string;
}

export interface ListedSkill {
  readonly name: string;
  readonly entry: LockEntry;
  readonly copies: InstalledCopy[];
}

async function copiesOf(
  name: string,
  entry: LockEntry,
  options: ManageOptions,
): Promise<InstalledCopy[]> {
  const copies: InstalledCopy[] = [];
  for (const agent of entry.agents) {
    const target = await agentSkillsFolder(installTarget(options, agent));
    const path = join(target.folder, name);
    if ((await unlessMissing(path, lstat(path))) === undefined) {
      copies.push({ agent, path, state: "missing" });
      continue;
    }
    const contentHash = await skillContentHash(path);
    copies.push({
      agent,
      path,
      state: contentHash === entry.contentHash ? "ok" : "modified",
      contentHash,
    });
  }
  return copies;
}

/** Every locked skill with where it is installed and whether the copy still matches the lock. */
export async function listSkills(
  options: ManageOptions,
): Promise<{ lockFile: string; skills: ListedSkill[] }> {
  const lockFile = lockFileOf(options);
  const lock = await readLock(lockFile);
  const skills: ListedSkill[] = [];
  for (const [name, entry] of Object.entries(lock.skills)) {
    skills.push({ name, entry, copies: await copiesOf(name, entry, options) });
  }
  return { lockFile, skills };
}

export interface RemoveResult {
  readonly lockFile: string;
  readonly removed: { name: string; agent: string; path: string }[];
}

/**
 * Remove locked skills: their installed folders (or links) for `agents` (all of the entry's
 * when none is given), and the lock entry once no agent keeps it. A name the lock does not know
 * is an error: removing is never a guess at what a folder is. A copy edited by hand is refused
 * (`skill.skill-modified-locally`, nothing removed) unless `force`, as `updateSkills` refuses it:
 * both would discard the edits.
 */
export async function removeSkills(
  names: readonly string[],
  options: ManageOptions & { readonly agents?: readonly string[]; readonly force?: boolean },
): Promise<RemoveResult> {
  const lockFile = lockFileOf(options);
  const lock = await readLock(lockFile);
  const unknown = names.filter((name) => lock.skills[name] === undefined);
  if (unknown.length > 0)
    throw new InputError("skill.skill-not-locked", `not in ${lockFile}: ${unknown.join(", ")}`, {
      file: lockFile,
    });
  if (options.force !== true) await refuseEditedCopies(names, lock, options);
  const removed: RemoveResult["removed"] = [];
  for (const name of names) {
    const entry = lock.skills[name] as LockEntry;
    const agents =
      options.agents === undefined || options.agents.length === 0 ? entry.agents : options.agents;
    for (const agent of agents) {
      if (!entry.agents.includes(agent)) continue;
      const target = await agentSkillsFolder(installTarget(options, agent));
      const path = join(target.folder, name);
      if ((await unlessMissing(path, lstat(path))) !== undefined) {
        await rm(path, { recursive: true, force: true });
        removed.push({ name, agent, path });
      }
    }
    const remaining = entry.agents.filter((agent) => !agents.includes(agent));
    if (remaining.length === 0) {
      delete lock.skills[name];
      if (entry.mode === "symlink") {
        // The canonical copy the links pointed to goes with the last link.
        const canonical = await agentSkillsFolder(installTarget(options, "agents"));
        const path = join(canonical.folder, name);
        if ((await unlessMissing(path, lstat(path))) !== undefined) {
          await rm(path, { recursive: true, force: true });
          removed.push({ name, agent: "canonical", path });
        }
      }
    } else lock.skills[name] = { ...entry, agents: remaining };
  }
  await writeLock(lockFile, lock);
  return { lockFile, removed };
}

/** Checked for every name before anything is removed, so a refusal leaves all copies in place. */
async function refuseEditedCopies(
  names: readonly string[],
  lock: { readonly skills: Record<string, LockEntry | undefined> },
  options: ManageOptions & { readonly agents?: readonly string[] },
): Promise<void> {
  const edited: InstalledCopy[] = [];
  for (const name of names) {
    const entry = lock.skills[name];
    if (entry === undefined) continue;
    const chosen = options.agents ?? [];
    for (const copy of await copiesOf(name, entry, options)) {
      if (copy.state === "modified" && (chosen.length === 0 || chosen.includes(copy.agent)))
        edited.push(copy);
    }
  }
  if (edited.length > 0)
    throw new InputError(
      "skill.skill-modified-locally",
      `${edited.map((copy) => copy.path).join(", ")} ${edited.length === 1 ? "was" : "were"} edited after installing; removing would discard the edits: pass --force to remove anyway`,
      { file: edited[0]?.path ?? lockFileOf(options) },
      { data: { edited } },
    );
}

export interface CheckedSkill {
  readonly name: string;
  readonly source: string;
  readonly ref: string | null;
  readonly lockedCommit: string;
  /** The commit the ref points to now, when the remote could be asked. */
  readonly latestCommit?: string;
  readonly updateAvailable: boolean;
  /** Installed copies that differ from the locked content (edited by hand) or are gone. */
  readonly drift: InstalledCopy[];
  readonly error?: string;
}

/** For each locked skill: is an installed copy edited or missing, and has its ref moved? */
export async function checkSkills(
  options: ManageOptions,
): Promise<{ lockFile: string; skills: CheckedSkill[] }> {
  const lockFile = lockFileOf(options);
  const lock = await readLock(lockFile);
  const skills: CheckedSkill[] = [];
  for (const [name, entry] of Object.entries(lock.skills)) {
    const drift = (await copiesOf(name, entry, options)).filter((copy) => copy.state !== "ok");
    const base = { name, source: entry.source, ref: entry.ref, lockedCommit: entry.commit, drift };
    try {
      const latestCommit = await resolveRemoteCommit(sourceOf(entry), options);
      skills.push({ ...base, latestCommit, updateAvailable: latestCommit !== entry.commit });
    } catch (error) {
      skills.push({ ...base, updateAvailable: false, error: (error as Error).message });
    }
  }
  return { lockFile, skills };
}

function sourceOf(entry: LockEntry): SkillSource {
  return {
    source: entry.source,
    url: entry.url,
    ref: entry.ref ?? undefined,
    kind: entry.url.startsWith("https://github.com/") ? "github" : "git",
  };
}

export interface UpdatedSkill {
  readonly name: string;
  readonly from: string;
  readonly to: string;
  readonly status: "updated" | "up-to-date";
}

/**
 * Re-pin locked skills (all when none is named) to the commit their ref points to now: check it
 * out, audit and install it for the entry's agents in place of the old copy, and update the lock.
 * A skill whose new version fails the audit keeps its old copy and lock entry.
 */
export async function updateSkills(
  names: readonly string[],
  options: ManageOptions & {
    readonly failOn?: AuditSeverity;
    readonly allowFindings?: boolean;
    /** Replace copies edited by hand too (they are refused otherwise). */
    readonly force?: boolean;
  },
): Promise<{ lockFile: string; skills: UpdatedSkill[] }> {
  const lockFile = lockFileOf(options);
  const lock = await readLock(lockFile);
  const chosen = names.length === 0 ? Object.keys(lock.skills) : [...names];
  const unknown = chosen.filter((name) => lock.skills[name] === undefined);
  if (unknown.length > 0)
    throw new InputError("skill.skill-not-locked", `not in ${lockFile}: ${unknown.join(", ")}`, {
      file: lockFile,
    });
  const updated: UpdatedSkill[] = [];
  for (const name of chosen) {
    const entry = lock.skills[name] as LockEntry;
    const source = sourceOf(entry);
    const commit = await resolveRemoteCommit(source, options);
    if (commit === entry.commit) {
      updated.push({ name, from: entry.commit, to: commit, status: "up-to-date" });
      continue;
    }
    const edited = (await copiesOf(name, entry, options)).filter(
      (copy) => copy.state === "modified",
    );
    if (edited.length > 0 && options.force !== true)
      throw new InputError(
        "skill.skill-modified-locally",
        `${name} was edited after it was installed (${edited.map((copy) => copy.path).join(", ")}); updating would discard the edits: pass --force to replace them`,
        { file: edited[0]?.path ?? lockFile },
      );
    const checkout = await checkoutCommit(source, commit, options);
    const skill = (await findSkillsInCheckout(checkout)).find(
      (each) => each.path === entry.path || each.name === name,
    );
    if (skill === undefined)
      throw new InputError(
        "skill.skill-not-in-source",
        `${entry.source} at ${commit.slice(0, 12)} no longer has the skill "${name}" (was at ${entry.path || "the root"})`,
        { field: "skill" },
      );
    for (const agent of entry.agents) {
      await installSkill(skill.folder, {
        ...installTarget(options, agent),
        mode: entry.mode,
        replace: true,
        ...(options.failOn === undefined ? {} : { auditFailOn: options.failOn }),
        ...(options.allowFindings === undefined ? {} : { allowFindings: options.allowFindings }),
      });
    }
    lock.skills[name] = {
      ...entry,
      commit,
      path: skill.path,
      contentHash: await skillContentHash(skill.folder),
      updatedAt: new Date().toISOString(),
    };
    await writeLock(lockFile, lock);
    updated.push({ name, from: entry.commit, to: commit, status: "updated" });
  }
  return { lockFile, skills: updated };
}
