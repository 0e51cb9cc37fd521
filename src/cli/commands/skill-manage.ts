/**
 * `skillsmith skill install | add | list | remove | check | update | clean`: skills installed
 * into agents' skill folders, from folders or sources, with a lock file.
 */
import { resolve } from "node:path";
import type { Command } from "commander";
// The modules, not the skill barrel: it re-exports the MCP server, whose SDK costs ~0.5 s of
// start-up that only `skill serve-mcp` needs (it imports the server itself, below).
import { AGENTS } from "../../skill/agents.js";
import { readBaseline } from "../../skill/baseline.js";
import type { AuditSeverity, InstallResult } from "../../skill/index.js";
import {
  AGENT_SKILL_DIRECTORIES,
  cleanAgentSkillFolders,
  installSkill,
} from "../../skill/install.js";
import { type CommandContext, printJson, printLines } from "../context.js";

import {
  agentOption,
  collect,
  display,
  failOnOption,
  type InstallFlags,
  installLine,
  manage,
  manageOptions,
  modeOption,
  plural,
  refusingOnAudit,
  type ScopeFlags,
  scopeOf,
  wrapList,
} from "./skill-shared.js";

/** `--json`, as every command here spells it. */
const jsonOption = ["--json", "print a JSON document instead of text"] as const;
/** `--into` and `--global` of the commands that work on a project's lock file. */
const intoProjectOption = ["--into <workspace>", "the project", "."] as const;
const globalLockOption = ["--global", "the global lock instead"] as const;
const gitCacheOption = ["--cache <dir>", "where git checkouts are cached"] as const;

/** `install`, `add`, `list`, `remove`, `check` and `update`, in the order `--help` lists them. */
export function registerSkillManagement(skill: Command, context: CommandContext): void {
  registerInstall(skill, context);
  registerAdd(skill, context);
  registerList(skill, context);
  registerRemove(skill, context);
  registerCheck(skill, context);
  registerUpdate(skill, context);
}

/** `install`: audit a skill folder, then copy it into each agent's folder. */
function registerInstall(skill: Command, context: CommandContext): void {
  skill
    .command("install")
    .description("Audit a skill, then copy it where an agent discovers skills")
    .addHelpText(
      "after",
      `\nThe skill is validated and audited first: a finding at or above --fail-on (default high)
refuses the install with exit code 1 unless --allow-findings is given. Installing an identical
copy again changes nothing; an invalid skill, or a different skill already installed under the
same name, is refused with exit code 2. Agents and their project folders:
${wrapList(AGENTS.map((agent) => `${agent.id} (${agent.project})`))}`,
    )
    .argument("<dir>", "the skill folder to install")
    .addOption(agentOption().makeOptionMandatory())
    .option("--into <workspace>", "the workspace (project root) to install into", ".")
    .option("--global", "install into the agent's global (user) folder instead")
    .addOption(modeOption())
    .addOption(failOnOption())
    .option("--allow-findings", "install even when the audit fails")
    .option(
      "--baseline <file>",
      "accept the reviewed findings in this baseline (from skill audit --write-baseline); others still refuse",
    )
    .option(...jsonOption)
    .action(async (directory: string, options: InstallFlags & { baseline?: string }) => {
      const { io } = context;
      const baseline =
        options.baseline === undefined
          ? undefined
          : await readBaseline(resolve(io.cwd, options.baseline));
      const results: InstallResult[] = [];
      for (const agent of options.agent) {
        const result = await refusingOnAudit(context, () =>
          installSkill(resolve(io.cwd, directory), {
            agent,
            ...scopeOf(options, io),
            mode: options.mode,
            auditFailOn: options.failOn,
            allowFindings: options.allowFindings === true,
            ...(baseline === undefined ? {} : { baseline }),
          }),
        );
        if (result === undefined) return;
        results.push(result);
      }
      if (options.json === true) {
        printJson(io, results.length === 1 ? results[0] : { installs: results });
        return;
      }
      printLines(
        io,
        results.map((result, index) => installLine(result, io, results.slice(0, index))),
      );
    });
}

/** `add`: install skills from a git source and pin them in the lock file. */
function registerAdd(skill: Command, context: CommandContext): void {
  skill
    .command("add")
    .description("Install skills from a git repository, pinned in a lock file")
    .addHelpText(
      "after",
      `\nSources: owner/repo (GitHub), any git URL (https://, ssh://, git@host:path, file://) or a
local repository path, each with an optional @ref (branch, tag or commit). git runs as the
system git; checkouts are cached (--cache > SKILLSMITH_CACHE_DIR > $XDG_CACHE_HOME/skillsmith/git).
Every picked skill is audited before any is installed. The lock file records source, commit and
content hash: ./skillsmith-lock.json in the project, or below $XDG_STATE_HOME with --global.`,
    )
    .argument("<source>", "owner/repo[@ref], a git URL[@ref] or a local repository path")
    .option(
      "--skill <name>",
      "a skill of the repository to install (repeatable; default: all)",
      collect,
      [],
    )
    .addOption(agentOption().makeOptionMandatory())
    .option("--into <workspace>", "the project to install into", ".")
    .option("--global", "install into the agents' global folders")
    .addOption(modeOption())
    .addOption(failOnOption())
    .option("--allow-findings", "add even when the audit fails")
    .option(...gitCacheOption)
    .option(...jsonOption)
    .action(async (source: string, options: InstallFlags & { skill: string[]; cache?: string }) => {
      const { io } = context;
      const { addSkills } = await manage();
      const result = await refusingOnAudit(context, () =>
        addSkills(source, {
          ...manageOptions(options, io),
          skills: options.skill,
          agents: options.agent,
          mode: options.mode,
          failOn: options.failOn,
          allowFindings: options.allowFindings === true,
        }),
      );
      if (result === undefined) return;
      if (options.json === true) {
        printJson(io, result);
        return;
      }
      const lines = [
        `${result.source} @ ${result.commit.slice(0, 12)}${result.ref === null ? "" : ` (${result.ref})`}`,
      ];
      for (const added of result.skills) {
        added.installs.forEach((install, index) => {
          lines.push(`  ${installLine(install, io, added.installs.slice(0, index))}`);
        });
      }
      lines.push(
        `locked ${plural(result.skills.length, "skill")} in ${display(result.lockFile, io)}`,
      );
      printLines(io, lines);
    });
}

/** `list`: the locked skills and the state of each installed copy. */
function registerList(skill: Command, context: CommandContext): void {
  skill
    .command("list")
    .description("List the skills of the lock file and the state of each installed copy")
    .option(...intoProjectOption)
    .option(...globalLockOption)
    .option(...jsonOption)
    .action(async (options: ScopeFlags & { json?: boolean }) => {
      const { io } = context;
      const { listSkills } = await manage();
      const result = await listSkills(manageOptions(options, io));
      if (options.json === true) {
        printJson(io, result);
        return;
      }
      const lines: string[] = [];
      for (const listed of result.skills) {
        lines.push(
          `${listed.name}  ${listed.entry.source}${listed.entry.ref === null ? "" : `@${listed.entry.ref}`}  ${listed.entry.commit.slice(0, 12)}  ${listed.entry.mode}`,
        );
        for (const copy of listed.copies)
          lines.push(`  ${copy.state.padEnd(8)}  ${copy.agent}  ${display(copy.path, io)}`);
      }
      lines.push(`${plural(result.skills.length, "skill")} in ${display(result.lockFile, io)}`);
      printLines(io, lines);
    });
}

/** `remove`: locked skills out of the agents' folders and the lock file. */
function registerRemove(skill: Command, context: CommandContext): void {
  skill
    .command("remove")
    .description("Remove locked skills from the agents' folders and the lock file")
    .argument("<name...>", "skill names, as the lock file has them")
    .addOption(agentOption().default([]))
    .option(...intoProjectOption)
    .option("--global", "the global scope instead")
    .option("--force", "remove copies that were edited by hand too (refused otherwise)")
    .option(...jsonOption)
    .action(
      async (
        names: string[],
        options: ScopeFlags & { agent: string[]; force?: boolean; json?: boolean },
      ) => {
        const { io } = context;
        const { removeSkills } = await manage();
        const result = await removeSkills(names, {
          ...manageOptions(options, io),
          agents: options.agent,
          force: options.force === true,
        });
        if (options.json === true) {
          printJson(io, result);
          return;
        }
        printLines(io, [
          ...result.removed.map(
            (each) => `removed  ${each.name}  ${each.agent}  ${display(each.path, io)}`,
          ),
          `${plural(result.removed.length, "folder")} removed; lock ${display(result.lockFile, io)}`,
        ]);
      },
    );
}

/** `check`: drifted copies and available updates; exit code 1 when there are any. */
function registerCheck(skill: Command, context: CommandContext): void {
  skill
    .command("check")
    .description("Report installed copies that drifted from the lock and sources with updates")
    .addHelpText(
      "after",
      "\nExit code 1 when a copy was edited or is missing, or an update is available.",
    )
    .option(...intoProjectOption)
    .option(...globalLockOption)
    .option(...gitCacheOption)
    .option(...jsonOption)
    .action(async (options: ScopeFlags & { cache?: string; json?: boolean }) => {
      const { io } = context;
      const { checkSkills } = await manage();
      const result = await checkSkills(manageOptions(options, io));
      if (
        result.skills.some(
          (each) => each.updateAvailable || each.drift.length > 0 || each.error !== undefined,
        )
      )
        context.exit(1);
      if (options.json === true) {
        printJson(io, result);
        return;
      }
      const lines: string[] = [];
      for (const each of result.skills) {
        const upstream =
          each.error !== undefined
            ? `cannot check the source: ${each.error}`
            : each.updateAvailable
              ? `update available: ${each.lockedCommit.slice(0, 12)} -> ${each.latestCommit?.slice(0, 12)}`
              : "up to date";
        lines.push(`${each.name}  ${upstream}`);
        for (const copy of each.drift)
          lines.push(`  ${copy.state}  ${copy.agent}  ${display(copy.path, io)}`);
      }
      lines.push(
        `${plural(result.skills.length, "skill")} checked against ${display(result.lockFile, io)}`,
      );
      printLines(io, lines);
    });
}

/** `update`: re-pin locked skills to their ref's current commit and reinstall them. */
function registerUpdate(skill: Command, context: CommandContext): void {
  skill
    .command("update")
    .description(
      "Re-pin locked skills to the current commit of their ref, audited, and reinstall them",
    )
    .argument("[name...]", "skill names (default: every locked skill)")
    .option(...intoProjectOption)
    .option(...globalLockOption)
    .addOption(failOnOption())
    .option("--allow-findings", "update even when the new version's audit fails")
    .option("--force", "replace installed copies that were edited by hand")
    .option(...gitCacheOption)
    .option(...jsonOption)
    .action(
      async (
        names: string[],
        options: ScopeFlags & {
          failOn: AuditSeverity;
          allowFindings?: boolean;
          force?: boolean;
          cache?: string;
          json?: boolean;
        },
      ) => {
        const { io } = context;
        const { updateSkills } = await manage();
        const result = await refusingOnAudit(context, () =>
          updateSkills(names, {
            ...manageOptions(options, io),
            failOn: options.failOn,
            allowFindings: options.allowFindings === true,
            force: options.force === true,
          }),
        );
        if (result === undefined) return;
        if (options.json === true) {
          printJson(io, result);
          return;
        }
        printLines(io, [
          ...result.skills.map((each) =>
            each.status === "updated"
              ? `updated  ${each.name}  ${each.from.slice(0, 12)} -> ${each.to.slice(0, 12)}`
              : `up to date  ${each.name}  ${each.to.slice(0, 12)}`,
          ),
          `lock ${display(result.lockFile, io)}`,
        ]);
      },
    );
}

/** `clean`. */
export function registerSkillClean(skill: Command, context: CommandContext): void {
  skill
    .command("clean")
    .description("Remove every agent-skill folder anywhere in a workspace")
    .addHelpText(
      "after",
      `\nRemoved wherever they occur (nested ones too; node_modules and .git are not searched):\n${wrapList(AGENT_SKILL_DIRECTORIES)}`,
    )
    .argument("<workspace>", "the workspace to clean")
    .option(...jsonOption)
    .action(async (workspace: string, options: { json?: boolean }) => {
      const { io } = context;
      const removed = await cleanAgentSkillFolders(resolve(io.cwd, workspace));
      if (options.json === true) {
        printJson(io, { removed });
        return;
      }
      printLines(io, [
        ...removed.map((path) => `removed  ${display(path, io)}`),
        `${removed.length} agent-skill ${removed.length === 1 ? "folder" : "folders"} removed`,
      ]);
    });
}
