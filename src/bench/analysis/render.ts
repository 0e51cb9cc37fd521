/** The verdict table and aggregate views of a `BenchReport` as plain text for people. */

import { flagDefinition } from "../../env/index.js";
import type { SkillClass } from "../../stats/index.js";
import { printable } from "./excerpt.js";
import {
  type BenchReport,
  type FlagCount,
  type Profile,
  type RequirementOutcome,
  type RunDetail,
  runNeedsExplanation,
} from "./report.js";

const CLASS_NAMES: Record<SkillClass, string> = {
  golden: "Golden",
  harmful: "Harmful",
  ineffective: "Ineffective",
};

function percent(value: number | null): string {
  return value === null ? "-" : `${(100 * value).toFixed(1)}%`;
}

function points(value: number | null): string {
  if (value === null) return "-";
  const rounded = Number(value.toFixed(1));
  return `${rounded > 0 ? "+" : ""}${rounded.toFixed(1)}`;
}

function pValue(value: number | null): string {
  if (value === null) return "-";
  if (value < 0.0001) return "<0.0001";
  return value.toFixed(4);
}

function table(rows: readonly (readonly string[])[]): string[] {
  const widths: number[] = [];
  for (const row of rows) {
    row.forEach((cell, index) => {
      widths[index] = Math.max(widths[index] ?? 0, cell.length);
    });
  }
  return rows.map((row) =>
    row
      .map((cell, index) => (index === row.length - 1 ? cell : cell.padEnd(widths[index] ?? 0)))
      .join("  ")
      .trimEnd(),
  );
}

function activation(profile: Profile): string {
  return profile.activation_rate === null ? "n/a" : `${Math.round(100 * profile.activation_rate)}%`;
}

function sensitivity(profile: Profile): string {
  return profile.sensitivity.disagreements.length === 0
    ? "agrees"
    : `differs: ${profile.sensitivity.disagreements.join(", ")}`;
}

function seconds(milliseconds: number): string {
  return `${(milliseconds / 1000).toFixed(1)}s`;
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? "" : "s"}`;
}

function verdict(profile: Profile): string {
  if (profile.unscorable !== null) return "unscorable";
  return profile.class === null ? "-" : CLASS_NAMES[profile.class];
}

function flagLabels(flags: readonly string[]): string {
  // An unknown flag's label is its id, which came from the store: no terminal control in it.
  return flags.map((flag) => printable(flagDefinition(flag).label)).join(", ");
}

function flagCounts(counts: readonly FlagCount[]): string {
  return counts
    .map(
      (count) =>
        `${count.label} ${plural(count.runs, "run")} (${plural(count.requirements, "requirement")})`,
    )
    .join(", ");
}

/** The short form of a requirement's outcome in the profile's one-line summary. */
function outcomeText(outcome: RequirementOutcome): string {
  if (!outcome.measurement.measurable) return `${outcome.id} not measured`;
  return `${outcome.id} ${points(outcome.delta)}${outcome.timeout ? " (timeout)" : ""}`;
}

/**
 * The flagged runs of a requirement: flags, exit code, evidence and the verifier output's
 * telling lines. Runs that say the same (both arms failing to collect alike) share one entry.
 */
function runLines(runs: readonly RunDetail[]): string[] {
  const groups = new Map<string, { names: string[]; lines: string[] }>();
  for (const run of runs) {
    const exit =
      run.verifier === undefined
        ? " (no verifier run)"
        : ` (verifier exit ${run.verifier.exitCode ?? "none"})`;
    const body = [
      ...(run.verifier?.evidence ?? [])
        .slice(0, 4)
        .map((line) => `      evidence: ${printable(line)}`),
      ...run.excerpt.map((line) => `      | ${line}`),
    ];
    const head = `${flagLabels(run.flags)}${exit}`;
    const key = JSON.stringify([head, body]);
    const group = groups.get(key) ?? { names: [], lines: [head, ...body] };
    group.names.push(`${run.arm}#${run.repeat}`);
    groups.set(key, group);
  }
  return [...groups.values()].flatMap(({ names, lines: [head, ...body] }) => [
    `    ${names.join(", ")} ${head}`,
    ...body,
  ]);
}

/** The lines under a profile for each requirement with a flag, not measured, or lost runs. */
function requirementLines(outcome: RequirementOutcome): string[] {
  const flagged = [...outcome.detail.without, ...outcome.detail.with].filter(runNeedsExplanation);
  if (outcome.measurement.measurable && outcome.flags.length === 0 && outcome.lost.length === 0)
    return [];
  const parts: string[] = [];
  if (outcome.flags.length > 0)
    parts.push(
      `flags: ${flagLabels(outcome.flags)}${outcome.weakVerifier && outcome.measurement.measurable ? " (counted in the verdict)" : ""}`,
    );
  if (!outcome.measurement.measurable) parts.push(`not measured: ${outcome.measurement.reason}`);
  const lines = [`  ${outcome.id}: ${parts.join("; ") || "runs lost to infrastructure"}`];
  lines.push(...runLines(flagged));
  for (const run of outcome.lost) {
    lines.push(
      `    ${run.arm}#${run.repeat} lost to infrastructure after ${plural(run.attempts, "attempt")}: ${run.lastError}`,
    );
  }
  return lines;
}

/** Lines of the text report: the verdict table first, then the views behind it. */
export function renderReportText(report: BenchReport): string[] {
  const lines: string[] = [];
  if (report.suite !== undefined)
    lines.push(`suite ${report.suite.name} (${report.suite.path})`, "");
  if (report.filter !== undefined) {
    const parts = [
      ...(report.filter.skills === undefined ? [] : [`skills ${report.filter.skills.join(", ")}`]),
      ...(report.filter.requirements === undefined
        ? []
        : [`requirements ${report.filter.requirements.join(", ")}`]),
    ];
    lines.push(`filtered to ${parts.join("; ")}: verdicts cover these runs only`, "");
  }
  if (report.profiles.length === 0) {
    lines.push("no results yet");
    return lines;
  }
  lines.push(
    ...table([
      [
        "config",
        "skill",
        "n",
        "without",
        "with",
        "Δ (points)",
        "p (sign-flip)",
        "verdict",
        "activation",
        "sensitivity",
      ],
      ...report.profiles.map((profile) => [
        profile.config,
        profile.skill,
        String(profile.n),
        percent(profile.without),
        percent(profile.with),
        points(profile.delta),
        pValue(profile.p),
        verdict(profile),
        activation(profile),
        profile.unscorable === null ? sensitivity(profile) : "-",
      ]),
    ]),
  );
  const { measurement } = report;
  lines.push(
    "",
    `verdicts use measurable pairs only: ${measurement.measurable} of ${plural(measurement.pairs, "pair")} measured${measurement.unmeasured.length === 0 ? "" : `; the ${measurement.unmeasured.length} left out are listed below with the reason`}`,
    "",
  );
  for (const profile of report.profiles) {
    lines.push(
      `${profile.config} / ${profile.skill}: measured ${profile.measured.measurable} of ${plural(profile.measured.total, "requirement")}; ${profile.requirements.map(outcomeText).join(", ")}`,
    );
    if (profile.unscorable !== null) lines.push(`  unscorable: ${profile.unscorable}`);
    for (const outcome of profile.requirements) lines.push(...requirementLines(outcome));
    if (profile.flagCounts.length > 0) lines.push(`  flags: ${flagCounts(profile.flagCounts)}`);
    for (const note of profile.notes) lines.push(`  note: ${note}`);
  }
  lines.push("");
  for (const config of report.configs) {
    const classes = `${config.classes.golden} golden, ${config.classes.harmful} harmful, ${config.classes.ineffective} ineffective${config.unscorable === 0 ? "" : `, ${config.unscorable} unscorable`}`;
    lines.push(
      `${config.config}${config.agent === undefined ? "" : ` (${config.agent}${config.model === undefined ? "" : ` ${config.model}`})`}: pass ratio ${percent(config.without)} → ${percent(config.with)} (${points(config.delta)}) over ${config.pairs} pairs${config.unmeasuredPairs === 0 ? "" : ` (${config.unmeasuredPairs} not measurable, left out)`}; ${classes}`,
    );
    for (const arm of ["without", "with"] as const) {
      const usage = config.usage[arm];
      lines.push(
        `  ${arm.padEnd(7)} ${usage.runs} runs, ${usage.inputTokens} input / ${usage.outputTokens} output tokens, $${usage.costUsd.toFixed(4)}, agent ${seconds(usage.agentMs)}, verifier ${seconds(usage.verifierMs)}, total ${seconds(usage.totalMs)}`,
      );
    }
  }
  if (report.configs.length > 1) {
    lines.push(
      `pooled: ${percent(report.pooled.without)} → ${percent(report.pooled.with)} (${points(report.pooled.delta)}) over ${report.pooled.pairs} pairs`,
    );
  }
  const { pairs } = report;
  lines.push(
    `identical outcomes: ${pairs.identical.count} of ${pairs.total} pairs${pairs.identical.share === null ? "" : ` (${percent(pairs.identical.share)})`}`,
    `pairs with |Δy| ≥ ${pairs.largeChanges.threshold}: ${pairs.largeChanges.count}${pairs.largeChanges.count === 0 ? "" : ` (${pairs.largeChanges.keys.map((key) => `${key.skill}/${key.requirement} ${key.deltaY > 0 ? "+" : ""}${key.deltaY.toFixed(2)}`).join(", ")})`}`,
  );
  if (pairs.misplacedDeliverables.count > 0) {
    lines.push(
      `misplaced deliverables (required files missing only in the assisted arm): ${pairs.misplacedDeliverables.count}`,
    );
    for (const item of pairs.misplacedDeliverables.keys) {
      lines.push(
        `  ${item.config}/${item.skill}/${item.requirement}: ${item.missing.join(", ")} (Δy ${item.deltaY === null ? "-" : item.deltaY.toFixed(2)})`,
      );
    }
  }
  if (pairs.timeouts > 0)
    lines.push(`measured pairs with a timeout (agent or verifier): ${pairs.timeouts}`);
  if (report.flagCounts.length > 0)
    lines.push(`flags over all runs: ${flagCounts(report.flagCounts)}`);
  if (report.unscorable.length > 0) {
    lines.push(`unscorable (nothing measurable, no verdict): ${report.unscorable.length}`);
    for (const item of report.unscorable)
      lines.push(`  ${item.config} / ${item.skill}: ${item.reason}`);
  }
  for (const correlation of report.correlations) {
    lines.push(
      `correlation of skill Δ, ${correlation.configs[0]} vs ${correlation.configs[1]} (${correlation.skills} skills): Pearson ${correlation.pearson === null ? "undefined" : correlation.pearson.toFixed(2)}, Spearman ${correlation.spearman === null ? "undefined" : correlation.spearman.toFixed(2)}`,
    );
  }
  for (const change of report.signChanges) {
    lines.push(
      `Δ changes sign between ${change.configs[0]} and ${change.configs[1]}: ${change.count} of ${change.compared} skills${change.count === 0 ? "" : ` (${change.skills.join(", ")})`}`,
    );
  }
  if (report.runs.infraAttempts > 0) {
    lines.push(
      `attempts lost to infrastructure (re-run, never scored): ${report.runs.infraAttempts}${report.measurement.lostRuns === 0 ? "" : `; ${plural(report.measurement.lostRuns, "run")} never scored, every attempt lost`}`,
    );
  }
  // Everything above can hold run text (reasons name unknown flags, errors, skill ids).
  return lines.map(printable);
}
