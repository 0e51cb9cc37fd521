import { join, relative, resolve } from "node:path";
import type { Command } from "commander";
import {
  createProgressRenderer,
  type QuickstartEvaluation,
  renderQuickstartText,
  runQuickstartEvaluation,
} from "../../bench/index.js";
import { writeFileAtomic } from "../../core/fs.js";
import { packageRoot } from "../../core/paths.js";
import { renderHtmlReport } from "../../report/index.js";
import type { AuditReport, SkillValidationResult } from "../../skill/index.js";
import { auditSkillFolder, findSkillFolders, validateSkillFolder } from "../../skill/index.js";
import { type CommandContext, log, printJson, printLines } from "../context.js";

export interface QuickstartSkill {
  readonly path: string;
  readonly validation: SkillValidationResult;
  readonly audit: AuditReport;
}

/** Validate and audit every skill under a folder (the first half of the quickstart). */
export async function checkSkills(skillsRoot: string): Promise<QuickstartSkill[]> {
  const skills: QuickstartSkill[] = [];
  for (const path of await findSkillFolders(skillsRoot)) {
    skills.push({
      path,
      validation: await validateSkillFolder(path),
      audit: await auditSkillFolder(path),
    });
  }
  return skills;
}

function renderSkills(skills: readonly QuickstartSkill[], skillsRoot: string): string[] {
  const lines = [`1. The example skills in ${skillsRoot}: validated and audited`, ""];
  const width = Math.max(5, ...skills.map((skill) => relative(skillsRoot, skill.path).length));
  lines.push(`  ${"SKILL".padEnd(width)}  VALID  ERRORS  WARNINGS  AUDIT high/medium/low`);
  for (const skill of skills) {
    const count = (severity: string) =>
      skill.audit.findings.filter((finding) => finding.severity === severity).length;
    lines.push(
      `  ${relative(skillsRoot, skill.path).padEnd(width)}  ${(skill.validation.valid ? "yes" : "NO").padEnd(5)}  ${String(skill.validation.errors.length).padEnd(6)}  ${String(skill.validation.warnings.length).padEnd(8)}  ${count("high")}/${count("medium")}/${count("low")}`,
    );
  }
  const findings = skills.flatMap((skill) => [
    ...skill.validation.errors.map((finding) => ({ ...finding, kind: "error" })),
    ...skill.validation.warnings.map((finding) => ({ ...finding, kind: "warning" })),
    ...skill.audit.findings.map((finding) => ({ ...finding, kind: `audit ${finding.severity}` })),
  ]);
  for (const finding of findings) {
    const where =
      relative(skillsRoot, finding.file) + (finding.line === undefined ? "" : `:${finding.line}`);
    lines.push(`    ${where}  [${finding.kind}] ${finding.code}  ${finding.message}`);
  }
  return lines;
}

/**
 * `skillsmith quickstart`: the README's main job on the embedded default. It checks the example
 * skills, then evaluates the quickstart suite end to end (paired runs, verifiers, exact
 * sign-flip test, verdicts) by replaying recorded patches: no model and no network needed.
 */
export function registerQuickstart(program: Command, context: CommandContext): void {
  program
    .command("quickstart")
    .description(
      "The main job on the bundled examples, offline: validate and audit examples/skills, then evaluate the quickstart suite's skills with paired replayed runs and print the verdicts",
    )
    .option(
      "--out <dir>",
      "run directory for the evaluation (re-running resumes)",
      "runs/quickstart",
    )
    .option("--json", "print one JSON document on stdout")
    .action(async (options: { out: string; json?: boolean }) => {
      const { io } = context;
      const skillsRoot = join(packageRoot(), "examples", "skills");
      const skills = await checkSkills(skillsRoot);
      if (options.json !== true)
        printLines(io, [
          ...renderSkills(skills, skillsRoot),
          "",
          "2. Does a skill help? Evaluating the quickstart suite",
          "",
        ]);
      const progress = createProgressRenderer(
        io.stderr,
        io.stderrIsTerminal === true && options.json !== true,
      );
      let evaluation: QuickstartEvaluation;
      try {
        evaluation = await runQuickstartEvaluation({
          runDir: resolve(io.cwd, options.out),
          onProgress: progress.update,
          onWarning: (message) => {
            progress.finish();
            log(io, `warning: ${message}`);
          },
          ...(options.json === true
            ? {}
            : {
                onLog: (line: string) => {
                  progress.finish();
                  log(io, line);
                },
              }),
        });
      } finally {
        progress.finish();
      }
      // The picture people look at first: one self-contained page beside the results.
      const htmlReport = join(evaluation.runDir, "report.html");
      await writeFileAtomic(
        htmlReport,
        renderHtmlReport(evaluation.report, { source: evaluation.runDir }),
      );
      if (options.json === true)
        printJson(io, { skills, evaluation: evaluation.report, htmlReport });
      else
        printLines(io, [
          ...renderQuickstartText(evaluation),
          "",
          `HTML report: ${relative(io.cwd, htmlReport)} (open it in a browser, or browse live: skillsmith view ${relative(io.cwd, evaluation.runDir)})`,
        ]);
    });
}
