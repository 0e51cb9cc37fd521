/** What the `skill` subcommands share: scope and install flags, and their text renderings. */
import { isAbsolute, join, relative, resolve } from "node:path";
import { InvalidArgumentError, Option } from "commander";
import { isSkillsmithError, UsageError } from "../../core/errors.js";
// The modules, not the skill barrel: it re-exports the MCP server, whose SDK costs ~0.5 s of
// start-up that only `skill serve-mcp` needs (it imports the server itself, below).
import { AGENTS } from "../../skill/agents.js";
import { AUDIT_SEVERITIES, auditFails } from "../../skill/baseline.js";
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
import type { CliIo, CommandContext } from "../context.js";

/** Installing from sources, the lock file and its zod schema load in the commands that use them. */
export function manage(): Promise<typeof import("../../skill/manage.js")> {
  return import("../../skill/manage.js");
}

/** One path's audit, or why it could not be audited. */
export type AuditEntry =
  | AuditReport
  | { readonly path: string; readonly error: { code: string; message: string } };

export interface ScopeFlags {
  into: string;
  global?: boolean;
  cache?: string;
}

export interface InstallFlags extends ScopeFlags {
  agent: string[];
  mode: InstallMode;
  failOn: AuditSeverity;
  allowFindings?: boolean;
  json?: boolean;
}

export function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

export function agentOption(): Option {
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

export function modeOption(): Option {
  return new Option(
    "--mode <mode>",
    "copy the skill, or link to one canonical copy in .agents/skills",
  )
    .choices(["copy", "symlink"])
    .default("copy");
}

export function failOnOption(): Option {
  return new Option("--fail-on <severity>", "lowest audit severity that refuses the skill")
    .choices([...AUDIT_SEVERITIES])
    .default("high");
}

export function homeOf(io: CliIo): string {
  const home = io.env.HOME?.trim();
  if (home === undefined || home === "")
    throw new UsageError("cli.skill-home", "--global needs $HOME to be set");
  return home;
}

export function scopeOf(options: ScopeFlags, io: CliIo) {
  return options.global === true
    ? { scope: "global" as const, home: homeOf(io), env: io.env }
    : { scope: "project" as const, workspace: resolve(io.cwd, options.into), env: io.env };
}

/** Checkouts: --cache > SKILLSMITH_CACHE_DIR > $XDG_CACHE_HOME/skillsmith/git > ~/.cache/skillsmith/git. */
export function cacheOf(options: ScopeFlags, io: CliIo): string {
  if (options.cache !== undefined) return resolve(io.cwd, options.cache);
  const fromEnv = io.env.SKILLSMITH_CACHE_DIR?.trim();
  if (fromEnv !== undefined && fromEnv !== "") return resolve(io.cwd, fromEnv);
  const xdg = io.env.XDG_CACHE_HOME?.trim();
  const base = xdg !== undefined && xdg !== "" ? xdg : join(io.env.HOME ?? io.cwd, ".cache");
  return join(base, "skillsmith", "git");
}

export function manageOptions(options: ScopeFlags, io: CliIo) {
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
export async function refusingOnAudit<T>(
  context: CommandContext,
  run: () => Promise<T>,
): Promise<T | undefined> {
  try {
    return await run();
  } catch (error) {
    if (isSkillsmithError(error) && error.code === "skill.skill-audit-failed") {
      context.io.stderr(`error: ${error.message}\n`);
      context.exit(1);
      return undefined;
    }
    throw error;
  }
}

/**
 * One install's line. `earlier` are the installs this command already made: several agents
 * share a folder (`.agents/skills`), and the second of them finding the copy the first just
 * wrote is part of this install, not an earlier one.
 */
export function installLine(
  result: InstallResult,
  io: CliIo,
  earlier: readonly InstallResult[] = [],
): string {
  const sharedWith = earlier.find(
    (other) => other.status === "installed" && other.destination === result.destination,
  );
  const verb =
    result.status === "installed"
      ? "installed"
      : sharedWith !== undefined
        ? `installed (the folder ${sharedWith.agent ?? "another agent"} uses too)`
        : "already installed (identical)";
  const link = result.linkedTo === undefined ? "" : ` -> ${display(result.linkedTo, io)}`;
  return `${verb}  ${result.name}  ${result.agent ?? ""}  ${display(result.destination, io)}${link}`;
}

export function wrapList(items: readonly string[]): string {
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

export async function expandAll(directories: readonly string[], io: CliIo): Promise<string[]> {
  const folders: string[] = [];
  for (const directory of directories) {
    folders.push(...(await findSkillFolders(resolve(io.cwd, directory))));
  }
  return folders;
}

/** Paths below the working directory are shown relative to it; others stay absolute. */
export function display(path: string, io: CliIo): string {
  const relativePath = relative(io.cwd, path);
  if (relativePath === "") return ".";
  return relativePath.startsWith("..") || isAbsolute(relativePath) ? path : relativePath;
}

export function findingLine(level: string, finding: Finding, io: CliIo): string {
  const file = display(finding.file, io);
  const where = finding.line === undefined ? file : `${file}:${finding.line}`;
  return `  ${level.padEnd(7)}  ${where}  ${finding.code}  ${finding.message}`;
}

export function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? "" : "s"}`;
}

export function renderValidation(results: readonly SkillValidationResult[], io: CliIo): string[] {
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

export function renderAudit(
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

export function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

export function renderTree(entries: readonly SkillEntry[]): string[] {
  return entries.map((entry) => {
    const depth = entry.path.split("/").length - 1;
    const name = entry.path.split("/").at(-1) ?? entry.path;
    const label = entry.kind === "directory" ? `${name}/` : `${name}  (${formatSize(entry.size)})`;
    return `  ${"  ".repeat(depth)}${label}${entry.symlink === true ? "  -> link" : ""}`;
  });
}

export function renderInspection(inspection: SkillInspection, io: CliIo): string[] {
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
