/** The verdict table and aggregate views of a `BenchReport` as plain text for people. */
import type { SkillClass } from "../../stats/index.js";
import type { BenchReport, Profile } from "./report.js";

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

/** Lines of the text report: the verdict table first, then the views behind it. */
export function renderReportText(report: BenchReport): string[] {
  const lines: string[] = [];
  if (report.suite !== undefined)
    lines.push(`suite ${report.suite.name} (${report.suite.path})`, "");
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
        profile.class === null ? "-" : CLASS_NAMES[profile.class],
        activation(profile),
        sensitivity(profile),
      ]),
    ]),
  );
  lines.push("");
  for (const profile of report.profiles) {
    const deltas = profile.requirements
      .map(
        (outcome) => `${outcome.id} ${points(outcome.delta)}${outcome.timeout ? " (timeout)" : ""}`,
      )
      .join(", ");
    lines.push(`${profile.config} / ${profile.skill}: ${deltas}`);
    for (const note of profile.notes) lines.push(`  note: ${note}`);
  }
  lines.push("");
  for (const config of report.configs) {
    const classes = `${config.classes.golden} golden, ${config.classes.harmful} harmful, ${config.classes.ineffective} ineffective`;
    lines.push(
      `${config.config}${config.agent === undefined ? "" : ` (${config.agent}${config.model === undefined ? "" : ` ${config.model}`})`}: pass ratio ${percent(config.without)} → ${percent(config.with)} (${points(config.delta)}) over ${config.pairs} pairs; ${classes}`,
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
  if (pairs.timeouts > 0) lines.push(`pairs with a timeout: ${pairs.timeouts}`);
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
      `attempts lost to infrastructure (re-run, never scored): ${report.runs.infraAttempts}`,
    );
  }
  return lines;
}
