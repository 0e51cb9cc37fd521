import { isAbsolute, join, relative, resolve } from "node:path";
import { type Command, InvalidArgumentError, Option } from "commander";
import { isSkillsmithError, UsageError } from "../../core/errors.js";
// The modules, not the skill barrel: it re-exports the MCP server, whose SDK costs ~0.5 s of
// start-up that only `skill serve-mcp` needs (it imports the server itself, below).
import { AGENTS } from "../../skill/agents.js";
import { auditSkillFolder } from "../../skill/audit.js";
import {
  AUDIT_SEVERITIES,
  applyBaseline,
  auditFails,
  createBaseline,
  readBaseline,
  writeBaseline,
} from "../../skill/baseline.js";
import { findSkillFolders } from "../../skill/discover.js";
import type {
  AuditReport,
  AuditSeverity,
  Finding,
  InstallMode,
  InstallResult,
  SkillEntry,
  SkillInspection,
  SkillValidationResult,
} from "../../skill/index.js";
import { inspectSkillFolder } from "../../skill/inspect.js";
import {
  AGENT_SKILL_DIRECTORIES,
  cleanAgentSkillFolders,
  installSkill,
} from "../../skill/install.js";
import { promptSkillsOf, renderAvailableSkills } from "../../skill/prompt.js";
import { validateSkillFolder } from "../../skill/validate.js";
import { type CliIo, type CommandContext, log, printJson, printLines } from "../context.js";
import { waitForTerminationSignal } from "../interrupt.js";

/** Resolves when `serve-mcp --http` should stop; the default waits for SIGINT or SIGTERM. */
let waitForStop: (() => Promise<void>) | undefined;

/** For tests: how `skill serve-mcp --http` waits before it stops. */
export function setSkillServeStop(wait: (() => Promise<void>) | undefined): void {
  waitForStop = wait;
}

/** Installing from sources, the lock file and its zod schema load in the commands that use them. */
function manage(): Promise<typeof import("../../skill/manage.js")> {
  return import("../../skill/manage.js");
}

/** `skillsmith skill ...`: validate, inspect, install, add, list, remove, check, update, clean, audit, to-prompt, serve-mcp. */
export function registerSkill(program: Command, context: CommandContext): void {
  const skill = program
    .command("skill")
    .description("Work with Agent Skills folders (SKILL.md packages)");

  skill
    .command("validate")
    .description("Check skill folders against every rule of the Agent Skills specification")
    .addHelpText(
      "after",
      "\nA folder without a SKILL.md that holds skill folders is expanded: each skill in it is\nvalidated. Exit code 1 when any skill is invalid, 0 otherwise (warnings do not fail).",
    )
    .argument("<dir...>", "skill folders, or folders holding skill folders")
    .option("--json", "print a JSON document instead of text")
    .action(async (directories: string[], options: { json?: boolean }) => {
      const { io } = context;
      const results: SkillValidationResult[] = [];
      for (const folder of await expandAll(directories, io)) {
        results.push(await validateSkillFolder(folder));
      }
      if (results.some((result) => !result.valid)) context.exit(1);
      if (options.json === true) {
        printJson(io, { results });
        return;
      }
      printLines(io, renderValidation(results, io));
    });

  skill
    .command("inspect")
    .description("Show a skill's properties, file tree, body size and modalities")
    .addHelpText(
      "after",
      "\nTokens are estimated at 4 characters each, rounded up. Modalities: text (a non-empty body),\nscripts, references, assets (files in those folders). Exit code 1 when the skill is invalid.",
    )
    .argument("<dir>", "a skill folder")
    .option("--json", "print a JSON document instead of text")
    .action(async (directory: string, options: { json?: boolean }) => {
      const { io } = context;
      const inspection = await inspectSkillFolder(resolve(io.cwd, directory));
      if (!inspection.valid) context.exit(1);
      if (options.json === true) {
        printJson(io, inspection);
        return;
      }
      printLines(io, renderInspection(inspection, io));
    });

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
    .option("--json", "print a JSON document instead of text")
    .action(async (directory: string, options: InstallFlags) => {
      const { io } = context;
      const results: InstallResult[] = [];
      for (const agent of options.agent) {
        const result = await refusingOnAudit(context, () =>
          installSkill(resolve(io.cwd, directory), {
            agent,
            ...scopeOf(options, io),
            mode: options.mode,
            auditFailOn: options.failOn,
            allowFindings: options.allowFindings === true,
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
        results.map((result) => installLine(result, io)),
      );
    });

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
    .option("--cache <dir>", "where git checkouts are cached")
    .option("--json", "print a JSON document instead of text")
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
        for (const install of added.installs) lines.push(`  ${installLine(install, io)}`);
      }
      lines.push(
        `locked ${plural(result.skills.length, "skill")} in ${display(result.lockFile, io)}`,
      );
      printLines(io, lines);
    });

  skill
    .command("list")
    .description("List the skills of the lock file and the state of each installed copy")
    .option("--into <workspace>", "the project", ".")
    .option("--global", "the global lock instead")
    .option("--json", "print a JSON document instead of text")
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

  skill
    .command("remove")
    .description("Remove locked skills from the agents' folders and the lock file")
    .argument("<name...>", "skill names, as the lock file has them")
    .addOption(agentOption().default([]))
    .option("--into <workspace>", "the project", ".")
    .option("--global", "the global scope instead")
    .option("--json", "print a JSON document instead of text")
    .action(async (names: string[], options: ScopeFlags & { agent: string[]; json?: boolean }) => {
      const { io } = context;
      const { removeSkills } = await manage();
      const result = await removeSkills(names, {
        ...manageOptions(options, io),
        agents: options.agent,
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
    });

  skill
    .command("check")
    .description("Report installed copies that drifted from the lock and sources with updates")
    .addHelpText(
      "after",
      "\nExit code 1 when a copy was edited or is missing, or an update is available.",
    )
    .option("--into <workspace>", "the project", ".")
    .option("--global", "the global lock instead")
    .option("--cache <dir>", "where git checkouts are cached")
    .option("--json", "print a JSON document instead of text")
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

  skill
    .command("update")
    .description(
      "Re-pin locked skills to the current commit of their ref, audited, and reinstall them",
    )
    .argument("[name...]", "skill names (default: every locked skill)")
    .option("--into <workspace>", "the project", ".")
    .option("--global", "the global lock instead")
    .addOption(failOnOption())
    .option("--allow-findings", "update even when the new version's audit fails")
    .option("--force", "replace installed copies that were edited by hand")
    .option("--cache <dir>", "where git checkouts are cached")
    .option("--json", "print a JSON document instead of text")
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

  skill
    .command("serve-mcp")
    .description("Serve skill folders over MCP by the Skills extension (SEP-2640)")
    .addHelpText(
      "after",
      "\nskills/list, skills/get, resources/read of skill://<name>/<file> and resources/directory/read,\nwith a SHA-256 digest and size for every file. Invalid skills, skills failing their audit\n(unless --allow-findings) and skills over the extension's limits (512 files, 16 MiB) are not\nserved; stderr says why. stdio by default; with --http, streamable HTTP on 127.0.0.1 at /mcp\nwith a bearer token (URL and token printed on stdout as JSON).",
    )
    .argument("<dir...>", "skill folders, or folders holding skill folders")
    .option("--http", "serve streamable HTTP on loopback instead of stdio")
    .option("--port <n>", "port for --http (0 picks a free one)", "0")
    .addOption(failOnOption())
    .option("--allow-findings", "serve skills whose audit fails too")
    .action(
      async (
        directories: string[],
        options: { http?: boolean; port: string; failOn: AuditSeverity; allowFindings?: boolean },
      ) => {
        const { io } = context;
        const { createSkillsMcpServer, loadSkillsToServe, serveMcpHttp, serveMcpStdio } =
          await import("../../skill/mcp-server.js");
        const loaded = await loadSkillsToServe(await expandAll(directories, io), {
          failOn: options.failOn,
          allowFindings: options.allowFindings === true,
        });
        for (const skipped of loaded.skipped)
          log(io, `not served: ${display(skipped.path, io)}: ${skipped.reason}`);
        if (loaded.skills.length === 0)
          throw new UsageError("cli.skill.nothing-to-serve", "no skill can be served (see above)");
        if (options.http !== true) {
          log(io, `serving ${plural(loaded.skills.length, "skill")} over MCP on stdio`);
          await serveMcpStdio(() => createSkillsMcpServer(loaded.skills));
          return;
        }
        const port = Number(options.port);
        if (!Number.isInteger(port) || port < 0 || port > 65_535)
          throw new UsageError("cli.port", `--port: expected 0 to 65535, got ${options.port}`);
        const server = await serveMcpHttp(() => createSkillsMcpServer(loaded.skills), { port });
        printJson(io, { url: server.url, token: server.token });
        log(
          io,
          `serving ${plural(loaded.skills.length, "skill")} at ${server.url} (bearer token on stdout)`,
        );
        await (waitForStop ?? waitForTerminationSignal)();
        await server.close();
      },
    );

  skill
    .command("to-prompt")
    .description("Print the <available_skills> block agents put in their context")
    .argument("<dir...>", "skill folders, or folders holding skill folders")
    .option("--json", "print the entries as JSON instead")
    .action(async (directories: string[], options: { json?: boolean }) => {
      const { io } = context;
      const skills = await promptSkillsOf(await expandAll(directories, io));
      if (options.json === true) {
        printJson(io, { skills, prompt: renderAvailableSkills(skills) });
        return;
      }
      printLines(io, [renderAvailableSkills(skills)]);
    });

  skill
    .command("clean")
    .description("Remove every agent-skill folder anywhere in a workspace")
    .addHelpText(
      "after",
      `\nRemoved wherever they occur (nested ones too; node_modules and .git are not searched):\n${wrapList(AGENT_SKILL_DIRECTORIES)}`,
    )
    .argument("<workspace>", "the workspace to clean")
    .option("--json", "print a JSON document instead of text")
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

  skill
    .command("audit")
    .description("Static safety review of skill folders")
    .addHelpText(
      "after",
      "\nLooks for invisible or bidirectional Unicode, instructions hidden in HTML comments, downloads\nrun in a shell, credential files read or sent, the environment sent to a URL, prompt injection,\nbase64 blobs and fixed absolute output paths. A folder holding skill folders is expanded.\nExit code 1 when a finding at or above --fail-on (default high) is not in the --baseline,\n2 when a path is missing (the others are still audited and reported).",
    )
    .argument("<dir...>", "skill folders, or folders holding skill folders")
    .addOption(
      new Option("--fail-on <severity>", "lowest severity that fails the audit")
        .choices([...AUDIT_SEVERITIES])
        .default("high"),
    )
    .option(
      "--baseline <file>",
      "accept the findings listed in this baseline (they are shown, not failing)",
    )
    .option("--write-baseline <file>", "write every current finding to a baseline file")
    .option("--json", "print a JSON document instead of text")
    .action(
      async (
        directories: string[],
        options: {
          failOn: AuditSeverity;
          baseline?: string;
          writeBaseline?: string;
          json?: boolean;
        },
      ) => {
        const { io } = context;
        const baseline =
          options.baseline === undefined
            ? undefined
            : await readBaseline(resolve(io.cwd, options.baseline));
        const entries: AuditEntry[] = [];
        for (const folder of await expandAll(directories, io)) {
          try {
            entries.push(await auditSkillFolder(folder));
          } catch (error) {
            if (!isSkillsmithError(error) || error.family !== "input") throw error;
            entries.push({ path: folder, error: { code: error.code, message: error.message } });
          }
        }
        const audited = entries.filter((entry): entry is AuditReport => !("error" in entry));
        const applied = baseline === undefined ? undefined : applyBaseline(audited, baseline);
        const byPath = new Map(
          (applied?.reports ?? audited).map((report) => [report.path, report]),
        );
        const results = entries.map((entry) => byPath.get(entry.path) ?? entry);
        const reports = results.filter((entry): entry is AuditReport => !("error" in entry));
        if (options.writeBaseline !== undefined) {
          const file = resolve(io.cwd, options.writeBaseline);
          const written = createBaseline(reports);
          await writeBaseline(file, written);
          log(
            io,
            `wrote ${plural(written.findings.length, "finding")} to the baseline ${display(file, io)}`,
          );
        }
        const failing =
          options.writeBaseline === undefined &&
          reports.some((report) => auditFails(report, options.failOn));
        if (failing) context.exit(1);
        if (results.some((entry) => "error" in entry)) context.exit(2);
        if (options.json === true) {
          printJson(io, {
            failOn: options.failOn,
            ...(options.baseline === undefined
              ? {}
              : { baseline: options.baseline, stale: applied?.stale ?? [] }),
            failed: failing,
            reports: results,
          });
          return;
        }
        printLines(io, renderAudit(results, options.failOn, applied?.stale, io));
      },
    );
}

/** One path's audit, or why it could not be audited. */
type AuditEntry =
  | AuditReport
  | { readonly path: string; readonly error: { code: string; message: string } };

interface ScopeFlags {
  into: string;
  global?: boolean;
  cache?: string;
}

interface InstallFlags extends ScopeFlags {
  agent: string[];
  mode: InstallMode;
  failOn: AuditSeverity;
  allowFindings?: boolean;
  json?: boolean;
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

function agentOption(): Option {
  const ids = AGENTS.map((agent) => agent.id);
  // A parser of our own rather than .choices(): commander's choice check does not repeat.
  return new Option(
    "--agent <agent>",
    "the agent to install for (repeatable): an id of `skill install --help`",
  ).argParser((value: string, previous: string[] | undefined) => {
    if (!ids.includes(value))
      throw new InvalidArgumentError(
        `"${value}" is not an agent; expected one of ${ids.join(", ")}`,
      );
    return [...(previous ?? []), value];
  });
}

function modeOption(): Option {
  return new Option(
    "--mode <mode>",
    "copy the skill, or link to one canonical copy in .agents/skills",
  )
    .choices(["copy", "symlink"])
    .default("copy");
}

function failOnOption(): Option {
  return new Option("--fail-on <severity>", "lowest audit severity that refuses the skill")
    .choices([...AUDIT_SEVERITIES])
    .default("high");
}

function homeOf(io: CliIo): string {
  const home = io.env.HOME?.trim();
  if (home === undefined || home === "")
    throw new UsageError("cli.skill.home", "--global needs $HOME to be set");
  return home;
}

function scopeOf(options: ScopeFlags, io: CliIo) {
  return options.global === true
    ? { scope: "global" as const, home: homeOf(io), env: io.env }
    : { scope: "project" as const, workspace: resolve(io.cwd, options.into), env: io.env };
}

/** Checkouts: --cache > SKILLSMITH_CACHE_DIR > $XDG_CACHE_HOME/skillsmith/git > ~/.cache/skillsmith/git. */
function cacheOf(options: ScopeFlags, io: CliIo): string {
  if (options.cache !== undefined) return resolve(io.cwd, options.cache);
  const fromEnv = io.env.SKILLSMITH_CACHE_DIR?.trim();
  if (fromEnv !== undefined && fromEnv !== "") return resolve(io.cwd, fromEnv);
  const xdg = io.env.XDG_CACHE_HOME?.trim();
  const base = xdg !== undefined && xdg !== "" ? xdg : join(io.env.HOME ?? io.cwd, ".cache");
  return join(base, "skillsmith", "git");
}

function manageOptions(options: ScopeFlags, io: CliIo) {
  const home = io.env.HOME?.trim();
  return {
    ...scopeOf(options, io),
    ...(home === undefined || home === "" ? {} : { home }),
    cacheDirectory: cacheOf(options, io),
    env: io.env,
    cwd: io.cwd,
  };
}

/**
 * A refused audit is a finding (exit 1), reported on stderr, and the command stops (undefined);
 * other errors go up as usual.
 */
async function refusingOnAudit<T>(
  context: CommandContext,
  run: () => Promise<T>,
): Promise<T | undefined> {
  try {
    return await run();
  } catch (error) {
    if (isSkillsmithError(error) && error.code === "skill-audit-failed") {
      context.io.stderr(`error: ${error.message}\n`);
      context.exit(1);
      return undefined;
    }
    throw error;
  }
}

function installLine(result: InstallResult, io: CliIo): string {
  const verb = result.status === "installed" ? "installed" : "already installed (identical)";
  const link = result.linkedTo === undefined ? "" : ` -> ${display(result.linkedTo, io)}`;
  return `${verb}  ${result.name}  ${result.agent ?? ""}  ${display(result.destination, io)}${link}`;
}

function wrapList(items: readonly string[]): string {
  const lines: string[] = [];
  let current = " ";
  for (const item of items) {
    if (current.length + item.length + 2 > 96) {
      lines.push(current);
      current = " ";
    }
    current += ` ${item}`;
  }
  lines.push(current);
  return lines.join("\n");
}

async function expandAll(directories: readonly string[], io: CliIo): Promise<string[]> {
  const folders: string[] = [];
  for (const directory of directories) {
    folders.push(...(await findSkillFolders(resolve(io.cwd, directory))));
  }
  return folders;
}

/** Paths below the working directory are shown relative to it; others stay absolute. */
function display(path: string, io: CliIo): string {
  const relativePath = relative(io.cwd, path);
  if (relativePath === "") return ".";
  return relativePath.startsWith("..") || isAbsolute(relativePath) ? path : relativePath;
}

function findingLine(level: string, finding: Finding, io: CliIo): string {
  const file = display(finding.file, io);
  const where = finding.line === undefined ? file : `${file}:${finding.line}`;
  return `  ${level.padEnd(7)}  ${where}  ${finding.code}  ${finding.message}`;
}

function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? "" : "s"}`;
}

function renderValidation(results: readonly SkillValidationResult[], io: CliIo): string[] {
  const lines: string[] = [];
  let errors = 0;
  let warnings = 0;
  for (const result of results) {
    lines.push(`${result.valid ? "valid  " : "INVALID"}  ${display(result.path, io)}`);
    for (const finding of result.errors) lines.push(findingLine("error", finding, io));
    for (const finding of result.warnings) lines.push(findingLine("warning", finding, io));
    errors += result.errors.length;
    warnings += result.warnings.length;
  }
  const invalid = results.filter((result) => !result.valid).length;
  lines.push(
    `${plural(results.length, "skill")}: ${results.length - invalid} valid, ${invalid} invalid (${plural(errors, "error")}, ${plural(warnings, "warning")})`,
  );
  return lines;
}

function renderAudit(
  entries: readonly AuditEntry[],
  failOn: AuditSeverity,
  stale: readonly string[] | undefined,
  io: CliIo,
): string[] {
  const lines: string[] = [];
  const counts = { high: 0, medium: 0, low: 0 };
  let suppressed = 0;
  let skills = 0;
  for (const entry of entries) {
    if ("error" in entry) {
      lines.push(
        `ERROR    ${display(entry.path, io)}  ${entry.error.code}  ${entry.error.message}`,
      );
      continue;
    }
    skills++;
    const status = auditFails(entry, failOn)
      ? "FAILED  "
      : entry.findings.length === 0
        ? "clean   "
        : "passed  ";
    lines.push(`${status} ${display(entry.path, io)}`);
    for (const finding of entry.findings) {
      if (finding.suppressed === true) suppressed++;
      else counts[finding.severity]++;
      const file = display(finding.file, io);
      const where = finding.line === undefined ? file : `${file}:${finding.line}`;
      const tag = finding.suppressed === true ? "  (baselined)" : "";
      lines.push(
        `  ${finding.severity.padEnd(6)}  ${where}  ${finding.code}  ${finding.message}  [${finding.id ?? "-"}]${tag}`,
      );
    }
  }
  const total = counts.high + counts.medium + counts.low;
  lines.push(
    `${plural(skills, "skill")} audited: ${plural(total, "finding")} (${counts.high} high, ${counts.medium} medium, ${counts.low} low)${suppressed > 0 ? `, ${suppressed} baselined` : ""}; failing on ${failOn} and above`,
  );
  if (stale !== undefined && stale.length > 0)
    lines.push(`baseline entries no longer found (fixed; remove them): ${stale.join(", ")}`);
  return lines;
}

function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

function renderTree(entries: readonly SkillEntry[]): string[] {
  return entries.map((entry) => {
    const depth = entry.path.split("/").length - 1;
    const name = entry.path.split("/").at(-1) ?? entry.path;
    const label = entry.kind === "directory" ? `${name}/` : `${name}  (${formatSize(entry.size)})`;
    return `  ${"  ".repeat(depth)}${label}${entry.symlink === true ? "  -> link" : ""}`;
  });
}

function renderInspection(inspection: SkillInspection, io: CliIo): string[] {
  const lines: string[] = [`skill  ${display(inspection.path, io)}`];
  const scalar = (value: unknown): string =>
    typeof value === "string" ? value : JSON.stringify(value);
  for (const [key, value] of Object.entries(inspection.properties)) {
    if (key === "metadata" && typeof value === "object" && value !== null) {
      lines.push("metadata:");
      for (const [metadataKey, metadataValue] of Object.entries(value)) {
        lines.push(`  ${metadataKey}: ${scalar(metadataValue)}`);
      }
      continue;
    }
    lines.push(`${key}: ${scalar(value)}`);
  }
  const { body } = inspection;
  lines.push(
    `body: ${plural(body.lines, "line")}, ${plural(body.characters, "character")}, ~${body.tokenEstimate} tokens`,
  );
  lines.push(
    `modalities: ${inspection.modalities.length === 0 ? "none" : inspection.modalities.join(", ")}`,
  );
  lines.push("files:", ...renderTree(inspection.files));
  for (const finding of inspection.errors) lines.push(findingLine("error", finding, io));
  for (const finding of inspection.warnings) lines.push(findingLine("warning", finding, io));
  lines.push(
    inspection.valid
      ? `valid (${plural(inspection.warnings.length, "warning")})`
      : `INVALID (${plural(inspection.errors.length, "error")}, ${plural(inspection.warnings.length, "warning")})`,
  );
  return lines;
}
