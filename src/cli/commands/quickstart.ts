import { join, relative } from "node:path";
import type { Command } from "commander";
import { packageRoot } from "../../core/paths.js";
import type { AuditReport, SkillValidationResult } from "../../skill/index.js";
import { auditSkillFolder, findSkillFolders, validateSkillFolder } from "../../skill/index.js";
import type { DeltaSummary } from "../../stats/index.js";
import { summarizeDeltas } from "../../stats/index.js";
import { type CommandContext, printJson, printLines } from "../context.js";

/**
 * A worked example of the protocol's statistics: checks passed (of 12) by one agent on ten
 * requirements, without and with a skill. Deltas are 100 × (pass-ratio difference), in points.
 */
const exampleChecksTotal = 12;
const examplePassedWithout = [6, 9, 4, 12, 5, 8, 7, 3, 10, 6];
const examplePassedWith = [9, 10, 6, 12, 9, 9, 9, 6, 9, 8];

export interface QuickstartSkill {
  readonly path: string;
  readonly validation: SkillValidationResult;
  readonly audit: AuditReport;
}

export interface QuickstartResult {
  readonly skills: QuickstartSkill[];
  readonly statistics: {
    readonly checksPerRequirement: number;
    readonly passedWithout: readonly number[];
    readonly passedWith: readonly number[];
    readonly deltas: readonly number[];
    readonly summary: DeltaSummary;
  };
}

/** The quickstart's work as a library call: validate + audit the examples, run the statistics. */
export async function runQuickstart(skillsRoot: string): Promise<QuickstartResult> {
  const skills: QuickstartSkill[] = [];
  for (const path of await findSkillFolders(skillsRoot)) {
    skills.push({
      path,
      validation: await validateSkillFolder(path),
      audit: await auditSkillFolder(path),
    });
  }
  const deltas = examplePassedWith.map(
    (passed, index) => (100 * (passed - (examplePassedWithout[index] ?? 0))) / exampleChecksTotal,
  );
  return {
    skills,
    statistics: {
      checksPerRequirement: exampleChecksTotal,
      passedWithout: examplePassedWithout,
      passedWith: examplePassedWith,
      deltas,
      summary: summarizeDeltas(deltas),
    },
  };
}

function formatNumber(value: number, digits = 3): string {
  return Number.isFinite(value) ? Number(value.toPrecision(digits)).toString() : String(value);
}

function renderText(result: QuickstartResult, skillsRoot: string): string[] {
  const lines = [`skillsmith quickstart: the bundled example skills (${skillsRoot}), offline`, ""];
  const width = Math.max(
    5,
    ...result.skills.map((skill) => relative(skillsRoot, skill.path).length),
  );
  lines.push(`  ${"SKILL".padEnd(width)}  VALID  ERRORS  WARNINGS  AUDIT high/medium/low`);
  for (const skill of result.skills) {
    const count = (severity: string) =>
      skill.audit.findings.filter((finding) => finding.severity === severity).length;
    lines.push(
      `  ${relative(skillsRoot, skill.path).padEnd(width)}  ${(skill.validation.valid ? "yes" : "NO").padEnd(5)}  ${String(skill.validation.errors.length).padEnd(6)}  ${String(skill.validation.warnings.length).padEnd(8)}  ${count("high")}/${count("medium")}/${count("low")}`,
    );
  }
  const findings = result.skills.flatMap((skill) => [
    ...skill.validation.errors.map((finding) => ({ ...finding, kind: "error" })),
    ...skill.validation.warnings.map((finding) => ({ ...finding, kind: "warning" })),
    ...skill.audit.findings.map((finding) => ({ ...finding, kind: `audit ${finding.severity}` })),
  ]);
  if (findings.length > 0) {
    lines.push("", "Findings:");
    for (const finding of findings) {
      const where =
        relative(skillsRoot, finding.file) + (finding.line === undefined ? "" : `:${finding.line}`);
      lines.push(`  ${where}  [${finding.kind}] ${finding.code}  ${finding.message}`);
    }
  }
  const { statistics } = result;
  const { summary } = statistics;
  lines.push(
    "",
    `Statistics example: checks passed (of ${statistics.checksPerRequirement}) on 10 requirements`,
    `  without skill: ${statistics.passedWithout.join(" ")}`,
    `  with skill:    ${statistics.passedWith.join(" ")}`,
    `  deltas d_i (points): ${statistics.deltas.map((delta) => formatNumber(delta)).join(", ")}`,
    `  Δ = ${summary.delta >= 0 ? "+" : ""}${formatNumber(summary.delta)} points, 95% CI [${formatNumber(summary.ci.lower)}, ${formatNumber(summary.ci.upper)}]`,
    `  exact sign-flip p = ${formatNumber(summary.signflip.p, 4)} (${summary.signflip.method}); paired t p = ${formatNumber(summary.ttest.p, 4)}; Wilcoxon p = ${formatNumber(summary.wilcoxon.p, 4)}`,
    `  verdict: ${summary.class.toUpperCase()} (α = ${summary.alpha}; sensitivity: t-test ${summary.sensitivity.ttest}, Wilcoxon ${summary.sensitivity.wilcoxon})`,
    "",
    "Next: `skillsmith skill validate <dir>`, `skillsmith skill audit <dir>`, `skillsmith stats test --deltas ...`",
  );
  return lines;
}

/** `skillsmith quickstart`: the README's main job on the embedded default. */
export function registerQuickstart(program: Command, context: CommandContext): void {
  program
    .command("quickstart")
    .description(
      "Run the main job on the bundled examples, offline: validate and audit examples/skills and print a worked statistics example",
    )
    .option("--json", "print one JSON document on stdout")
    .option("--skills <dir>", "validate and audit these skills instead of the bundled examples")
    .action(async (options: { json?: boolean; skills?: string }) => {
      const skillsRoot =
        options.skills === undefined
          ? join(packageRoot(), "examples", "skills")
          : join(context.io.cwd, options.skills);
      const result = await runQuickstart(skillsRoot);
      if (options.json === true) printJson(context.io, result);
      else printLines(context.io, renderText(result, skillsRoot));
    });
}
