import { isAbsolute, relative, resolve } from "node:path";
import { type Command, Option } from "commander";
import { isSkillsmithError } from "../../core/errors.js";
import {
  AGENT_SKILL_DIRECTORIES,
  AUDIT_SEVERITIES,
  type AuditReport,
  type AuditSeverity,
  applyBaseline,
  auditFails,
  auditSkillFolder,
  cleanAgentSkillFolders,
  createBaseline,
  type Finding,
  findSkillFolders,
  inspectSkillFolder,
  installSkill,
  readBaseline,
  SKILL_AGENTS,
  type SkillAgent,
  type SkillEntry,
  type SkillInspection,
  type SkillValidationResult,
  validateSkillFolder,
  writeBaseline,
} from "../../skill/index.js";
import { type CliIo, type CommandContext, log, printJson, printLines } from "../context.js";

/** `skillsmith skill ...`: validate, inspect, install, clean, audit. */
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
    .description("Copy a valid skill where an agent discovers project skills")
    .addHelpText(
      "after",
      "\nDestinations: .claude/skills/<name>/ (claude-code), .agents/skills/<name>/ (codex, agents).\nInstalling an identical copy again changes nothing; an invalid skill, or a different skill\nalready installed under the same name, is refused with exit code 2.",
    )
    .argument("<dir>", "the skill folder to install")
    .addOption(
      new Option("--agent <agent>", "the agent to install for")
        .choices([...SKILL_AGENTS])
        .makeOptionMandatory(),
    )
    .requiredOption("--into <workspace>", "the workspace (project root) to install into")
    .option("--json", "print a JSON document instead of text")
    .action(
      async (directory: string, options: { agent: SkillAgent; into: string; json?: boolean }) => {
        const { io } = context;
        const result = await installSkill(resolve(io.cwd, directory), {
          agent: options.agent,
          workspace: resolve(io.cwd, options.into),
        });
        if (options.json === true) {
          printJson(io, result);
          return;
        }
        const verb = result.status === "installed" ? "installed" : "already installed (identical)";
        printLines(io, [`${verb}  ${result.name}  ${display(result.destination, io)}`]);
      },
    );

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
