/**
 * `skillsmith skill ...`: reading skills (validate, inspect, to-prompt, audit) here; installing
 * and managing them in `skill-manage.ts`, serving them over MCP in `skill-serve.ts`.
 */
import { resolve } from "node:path";
import { type Command, Option } from "commander";
import { isSkillsmithError } from "../../core/errors.js";
// The modules, not the skill barrel: it re-exports the MCP server, whose SDK costs ~0.5 s of
// start-up that only `skill serve-mcp` needs.
import { auditSkillFolder } from "../../skill/audit.js";
import {
  AUDIT_SEVERITIES,
  applyBaseline,
  auditFails,
  createBaseline,
  readBaseline,
  writeBaseline,
} from "../../skill/baseline.js";
import type { AuditReport, AuditSeverity, SkillValidationResult } from "../../skill/index.js";
import { inspectSkillFolder } from "../../skill/inspect.js";
import { promptSkillsOf, renderAvailableSkills } from "../../skill/prompt.js";
import { validateSkillFolder } from "../../skill/validate.js";
import { type CommandContext, log, printJson, printLines } from "../context.js";
import { registerSkillClean, registerSkillManagement } from "./skill-manage.js";
import { registerSkillServe } from "./skill-serve.js";
import {
  type AuditEntry,
  display,
  expandAll,
  plural,
  renderAudit,
  renderInspection,
  renderValidation,
} from "./skill-shared.js";

// Tests set how `serve-mcp --http` stops from here, where it was first defined.
export { setSkillServeStop } from "./skill-serve.js";

/** `skillsmith skill ...`: validate, inspect, install, add, list, remove, check, update, clean, audit, to-prompt, serve-mcp. */
/** The folder named on the command line is not there (or is a link to nothing). */
function missingPath(result: SkillValidationResult): boolean {
  return result.errors.some((finding) => finding.code === "path-not-found");
}

export function registerSkill(program: Command, context: CommandContext): void {
  const skill = program
    .command("skill")
    .description("Work with Agent Skills folders (SKILL.md packages)");

  skill
    .command("validate")
    .description("Check skill folders against every rule of the Agent Skills specification")
    .addHelpText(
      "after",
      "\nA folder without a SKILL.md that holds skill folders is expanded: each skill in it is\nvalidated. Exit code 1 when any skill is invalid, 2 when a path does not exist, 0 otherwise\n(warnings do not fail).",
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
      // A path that is not there is a usage error, as in `skill audit` and `skill inspect`.
      if (results.some(missingPath)) context.exit(2);
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
      "\nTokens are estimated at 4 characters each, rounded up. Modalities: text (a non-empty body),\nscripts, references, assets (files in those folders). Exit code 1 when the skill is invalid,\n2 when the path does not exist.",
    )
    .argument("<dir>", "a skill folder")
    .option("--json", "print a JSON document instead of text")
    .action(async (directory: string, options: { json?: boolean }) => {
      const { io } = context;
      const inspection = await inspectSkillFolder(resolve(io.cwd, directory));
      if (!inspection.valid) context.exit(1);
      if (missingPath(inspection)) {
        context.exit(2);
        // Nothing to show of a folder that is not there: no empty body or file list.
        if (options.json !== true) {
          io.stderr(`error: ${directory}: no such skill folder\n`);
          return;
        }
      }
      if (options.json === true) {
        printJson(io, inspection);
        return;
      }
      printLines(io, renderInspection(inspection, io));
    });

  registerSkillManagement(skill, context);
  registerSkillServe(skill, context);
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

  registerSkillClean(skill, context);
  registerSkillAudit(skill, context);
}

/** `skill audit`: the static safety review, with baselines of reviewed findings. */
function registerSkillAudit(skill: Command, context: CommandContext): void {
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
