/** `bench check` as a person reads it (text) and as a program reads it (JSON). */
import {
  percent,
  type RequirementCheck,
  type RequirementStatus,
  type SuiteCheck,
} from "./check.js";
import { describeToolNeeds } from "./missing-tools.js";

/** What `--json` and the run manifest say of one requirement's check. */
export interface RequirementCheckJson {
  skill: string;
  requirement: string;
  status: RequirementStatus;
  untouchedPassRatio: number | null;
  reason: string;
  /** Present when every failing check fails only for a missing tool: which, and how many. */
  toolNeeds?: { tool: string; checks: number }[];
}

export function requirementCheckJson(requirement: RequirementCheck): RequirementCheckJson {
  return {
    skill: requirement.skill,
    requirement: requirement.requirement,
    status: requirement.status,
    untouchedPassRatio: requirement.untouchedPassRatio,
    reason: requirement.reason,
    ...(requirement.toolNeeds === undefined
      ? {}
      : { toolNeeds: requirement.toolNeeds.map((need) => ({ ...need })) }),
  };
}

/** `ok`, or `ok, 3 checks need go` when the failing checks fail only for missing tools. */
export function statusLabel(requirement: RequirementCheck): string {
  return requirement.toolNeeds === undefined
    ? requirement.status
    : `${requirement.status}, ${describeToolNeeds(requirement.toolNeeds)}`;
}

export function checkJson(check: SuiteCheck): { requirements: RequirementCheckJson[] } {
  return { requirements: check.requirements.map(requirementCheckJson) };
}

/** Lines of a broken verifier's output shown under the table. */
const OUTPUT_LINES_SHOWN = 12;

/** The text table of `bench check`, then the output of each broken verifier. */
export function renderCheckText(check: SuiteCheck): string[] {
  const lines: string[] = [];
  const rows = check.requirements.map((requirement) => [
    requirement.skill,
    requirement.requirement,
    requirement.untouchedPassRatio === null ? "-" : percent(requirement.untouchedPassRatio),
    statusLabel(requirement),
    requirement.reason,
  ]);
  const header = ["skill", "requirement", "untouched", "status", "reason"];
  const widths = header.map((title, index) =>
    Math.max(title.length, ...rows.map((row) => (index === 4 ? 0 : (row[index] ?? "").length))),
  );
  const format = (row: readonly string[]) =>
    row.map((cell, index) => (index === 4 ? cell : cell.padEnd(widths[index] ?? 0))).join("  ");
  lines.push(format(header));
  for (const row of rows) lines.push(format(row));
  const counts = { ok: 0, weak: 0, broken: 0 };
  for (const requirement of check.requirements) counts[requirement.status] += 1;
  lines.push(
    "",
    `${check.requirements.length} requirements: ${counts.ok} ok, ${counts.weak} weak, ${counts.broken} broken (weak from ${percent(check.weakThreshold)} of checks passing untouched)`,
  );
  for (const environment of check.environments) {
    if (environment.status === "failed") {
      lines.push(`environment of ${environment.skill} failed: ${environment.reason ?? ""}`);
    }
  }
  // What a broken verifier printed, so the reason can be checked without another run.
  for (const requirement of check.requirements) {
    const output = requirement.untouched?.output.trim();
    if (requirement.status !== "broken" || output === undefined || output === "") continue;
    const all = output.split("\n");
    // From the first error pytest reports (`E   …`), else the end, where summaries are.
    const first = all.findIndex((line) => /^E\s{2,}\S/.test(line));
    const shown =
      first < 0 ? all.slice(-OUTPUT_LINES_SHOWN) : all.slice(first, first + OUTPUT_LINES_SHOWN);
    lines.push(
      "",
      `${requirement.skill}/${requirement.requirement}: the verifier's output (${first < 0 ? "last" : "from its first error,"} ${shown.length} lines):`,
    );
    lines.push(...shown.map((line) => `  | ${line}`));
  }
  return lines;
}
