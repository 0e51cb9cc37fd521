/**
 * The verdict table and aggregate views of a `BenchReport` as plain text for people.
 *
 * One file although past 400 lines: it is the whole text rendering of one report, section by
 * section in the order printed, and sections share their column formatting.
 */

import { flagDefinition } from "../../env/verifier/flags.js";
import {
  describeShiftInterval,
  INEFFECTIVE_DEFINITION,
  type SkillClass,
} from "../../stats/index.js";
import { heldVerdictLabel, reviewLines } from "../review/render.js";
import type { ArmSkills } from "../store/manifest.js";
import { printable } from "./excerpt.js";
import {
  type BenchReport,
  type FlagCount,
  type Profile,
  type RequirementOutcome,
  type RunDetail,
  runNeedsExplanation,
  verifierExitText,
} from "./report.js";

const CLASS_NAMES: Record<SkillClass, string> = {
  golden: "Golden",
  harmful: "Harmful",
  ineffective: "Ineffective",
  undecided: "Undecided",
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

/** A profile's p; a "dp-bounds" p is an upper bound and says so. */
function profileP(profile: Profile): string {
  return profile.pMethod?.method === "dp-bounds" && profile.p !== null
    ? `≤${pValue(profile.p)}`
    : pValue(profile.p);
}

function verdict(profile: Profile): string {
  if (profile.unscorable !== null) return "unscorable";
  const held = heldVerdictLabel(profile);
  if (held !== undefined) return held;
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
    const exit = ` (${verifierExitText(run)})`;
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

function number(value: number, digits = 2): string {
  return value.toFixed(digits);
}

/**
 * Under the verdict table: how many profiles were tested, the discoveries by raw p and by BH q,
 * and what chance alone would give (see `src/stats/README.md`).
 */
function multiplicityLines(report: BenchReport): string[] {
  const table = report.multiplicity;
  if (table.tested === 0) return [];
  const alpha = number(table.alpha);
  const expected = table.expectedFalseDiscoveries;
  const notTested =
    table.notTested.length === 0 ? "" : ` (${table.notTested.length} unscorable, not tested)`;
  return [
    "",
    `multiple testing: ${plural(table.tested, "profile")} tested at α = ${alpha}${notTested}; ${table.discoveries.raw} with p < α, ${table.discoveries.fdr} with Benjamini–Hochberg q < α`,
    `  if no skill had any effect, ${number(expected.globalNull)} profiles would be expected to reach p < α by chance (the sum of each test's exact size at α given its deltas${expected.exactSizes === table.tested ? "" : `; α for the ${table.tested - expected.exactSizes} whose size is not known exactly`}; at most m·α = ${number(expected.bound)})`,
    `  verdicts (FDR) keep the expected share of false discoveries among their ${plural(table.discoveries.fdr, "Golden or Harmful skill")} at most ${alpha} (BH over one family of ${plural(table.familySize ?? table.tested, "test")}${(table.familySize ?? table.tested) > table.tested ? `: the profiles and ${plural((table.familySize ?? table.tested) - table.tested, "other arm pair")}` : ""}; tests independent or positively dependent)`,
    `  ${table.ineffective ?? INEFFECTIVE_DEFINITION}; Undecided = p known only as a bracket containing α`,
  ];
}

/**
 * Each skill with variants: every pair of arms as "b vs a" (Δ = b − a), and a square matrix of
 * Δ with the p under it, rows the baseline arm.
 */
function armMatrixLines(report: BenchReport): string[] {
  const lines: string[] = [];
  for (const matrix of report.arms ?? []) {
    lines.push(
      "",
      `arms of ${matrix.config} / ${matrix.skill} (Δ = column − row, points; p sign-flip):`,
    );
    const cell = (a: string, b: string) => {
      const pair = matrix.pairs.find(
        (item) => (item.a === a && item.b === b) || (item.a === b && item.b === a),
      );
      if (pair === undefined || pair.delta === null) return "-";
      const delta = pair.a === a ? pair.delta : -pair.delta;
      return `${points(delta)} (p ${pValue(pair.p)})`;
    };
    lines.push(
      ...table([
        ["", ...matrix.arms.map((arm) => arm.label)],
        ...matrix.arms.map((row) => [
          row.label,
          ...matrix.arms.map((column) =>
            column.arm === row.arm ? "·" : cell(row.arm, column.arm),
          ),
        ]),
      ]),
    );
    lines.push(
      ...table([
        ["comparison", "n", "Δ (points)", "p (sign-flip)", "verdict", "q (BH)", "verdict (FDR)"],
        ...matrix.pairs.map((pair) => [
          pair.label,
          `${pair.deltas.length}/${pair.requirements}`,
          points(pair.delta),
          pValue(pair.p),
          pair.class === null ? "unscorable" : CLASS_NAMES[pair.class],
          pValue(pair.q),
          pair.classFdr === null ? "-" : CLASS_NAMES[pair.classFdr],
        ]),
      ]),
    );
    for (const pair of matrix.pairs) {
      for (const item of pair.unmeasured) {
        lines.push(`  ${pair.label} / ${item.requirement}: not measured (${item.reason})`);
      }
    }
  }
  return lines;
}

/** Which results came from elsewhere: reused baselines and re-graded runs. */
function provenanceLines(report: BenchReport): string[] {
  const provenance = report.provenance;
  if (provenance === undefined) return [];
  const lines: string[] = [];
  if (provenance.reused.length > 0) {
    lines.push(
      "",
      `${plural(provenance.reused.length, "unassisted run")} reused from earlier runs (same fingerprint, not executed here):`,
    );
    for (const item of provenance.reused) lines.push(`  ${item.key} ← ${item.runDir} ${item.from}`);
  }
  if (provenance.regraded.length > 0) {
    const rescored = provenance.regraded.filter((item) => item.rescored).length;
    lines.push(
      "",
      `${plural(provenance.regraded.length, "run")} re-graded from stored patches (${rescored} re-scored by the verifier, no agent run):`,
    );
    for (const item of provenance.regraded.filter((entry) => !entry.rescored)) {
      lines.push(`  ${item.key}: kept as it was (${item.reason ?? "not re-scored"})`);
    }
  }
  return lines;
}

function signed(value: number): string {
  return `${value > 0 ? "+" : ""}${value.toFixed(1)}`;
}

/** What a profile's test could detect, and the spread of its repeats. */
function detectableLines(profile: Profile): string[] {
  const effect = profile.detectable;
  const lines: string[] = [];
  if (effect !== null) {
    const interval =
      effect.interval.none !== undefined
        ? `no interval: ${effect.interval.none}`
        : effect.interval.lower === null || effect.interval.upper === null
          ? `no uniform effect is ruled out with ${plural(effect.n, "requirement")} (2^(1−${effect.n}) ≥ α)`
          : `a uniform effect below ${signed(effect.interval.lower)} or above ${signed(effect.interval.upper)} points is ruled out (${describeShiftInterval(effect.interval)}; every requirement shifted alike)`;
    const zeros = effect.anyEffectDetectable
      ? ""
      : `; with ${effect.nonZero} non-zero of ${effect.n} deltas the smallest attainable p is ${pValue(effect.minimumP)} ≥ α, so no size of these deltas could have given a verdict`;
    lines.push(`  detectable: ${interval}${zeros}`);
  }
  const variability = profile.variability;
  if (variability !== null && (variability.without.sd !== null || variability.with.sd !== null)) {
    const sd = (value: number | null) => (value === null ? "-" : value.toFixed(1));
    lines.push(
      `  within-requirement SD over ${number(variability.repeats, 1)} repeats (pooled): without ${sd(variability.without.sd)}, with ${sd(variability.with.sd)} points`,
    );
  }
  return lines;
}

/** Per configuration: requirements (and repeats) needed to detect the chosen effect. */
function designLines(config: BenchReport["configs"][number]): string[] {
  const design = config.design;
  if (design === null) return [];
  const rows = design.rows
    .map(
      (row) =>
        `${row.requirements === null ? "more than 1000" : row.requirements} requirements at ${plural(row.repeats, "repeat")} (σ ${row.sd.toFixed(1)})`,
    )
    .join("; ");
  const within =
    design.within === null
      ? "no repeats to separate within- from between-requirement variance"
      : `between-requirement SD ${design.within.betweenSd.toFixed(1)}, within (both arms) ${Math.sqrt(design.within.variance).toFixed(1)}`;
  return [
    `  ${config.config}: to detect ${signed(design.effect)} points with ${Math.round(100 * design.targetPower)}% power at α = ${number(design.alpha)}: ${rows}`,
    `    σ = ${design.sd.toFixed(1)} points pooled over ${plural(design.profiles, "skill")} (${design.df} df); ${within}; power of the exact sign-flip test for Normal(δ, σ²) requirement deltas, simulated (${design.draws} draws, seed ${design.seed}; the model in full: --json, src/stats/README.md)`,
    ...(design.passRatio === null || design.passRatio === undefined
      ? []
      : [
          `    pass-ratio model (paired binomial, ${design.passRatio.trials} checks × repeats per arm, ${design.passRatio.draws} draws): ${design.passRatio.requirements === null ? `more than ${design.passRatio.maxRequirements}` : design.passRatio.requirements} requirements (power ${design.passRatio.power.toFixed(3)}); the discrete deltas pass ratios give`,
        ]),
  ];
}

/** Lines of the text report: the verdict table first, then the views behind it. */
export function renderReportText(report: BenchReport): string[] {
  const lines: string[] = headerLines(report);
  lines.push(...armSkillLines(report), ...controlLines(report));
  if (report.profiles.length === 0) {
    lines.push(
      report.controls === undefined ? "no results yet" : "no skill verdicts: controls only",
    );
    return lines.map(printable);
  }
  const provisional = report.completeness?.complete === false;
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
        "q (BH)",
        "verdict (FDR)",
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
        profileP(profile),
        provisional && profile.class !== null
          ? `${verdict(profile)} (provisional)`
          : verdict(profile),
        pValue(profile.q),
        profile.classFdr === null
          ? "-"
          : `${CLASS_NAMES[profile.classFdr]}${provisional ? " (provisional)" : ""}`,
        activation(profile),
        profile.unscorable === null ? sensitivity(profile) : "-",
      ]),
    ]),
  );
  lines.push(...multiplicityLines(report));
  lines.push(...armMatrixLines(report), ...provenanceLines(report));
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
    lines.push(...detectableLines(profile));
    for (const outcome of profile.requirements) lines.push(...requirementLines(outcome));
    if (profile.flagCounts.length > 0) lines.push(`  flags: ${flagCounts(profile.flagCounts)}`);
    for (const note of profile.notes) lines.push(`  note: ${note}`);
  }
  lines.push("");
  for (const config of report.configs) {
    const classes = `${config.classes.golden} golden, ${config.classes.harmful} harmful, ${config.classes.ineffective} ineffective${config.classes.undecided === undefined ? "" : `, ${config.classes.undecided} undecided`}${config.classes.needsReview === undefined ? "" : `, ${config.classes.needsReview} needs review`}${config.unscorable === 0 ? "" : `, ${config.unscorable} unscorable`}`;
    lines.push(
      `${config.config}${config.agent === undefined ? "" : ` (${config.agent}${config.model === undefined ? "" : ` ${config.model}`}${config.derivedFrom === undefined ? "" : `; configuration "${config.derivedFrom.id}" with --agent/--model`})`}: pass ratio ${percent(config.without)} → ${percent(config.with)} (${points(config.delta)}) over ${config.pairs} pairs${config.unmeasuredPairs === 0 ? "" : ` (${config.unmeasuredPairs} not measurable, left out)`}; ${classes}`,
    );
    for (const arm of ["without", "with"] as const) {
      const usage = config.usage[arm];
      lines.push(
        `  ${arm.padEnd(7)} ${usage.runs} runs, ${usage.inputTokens} input / ${usage.outputTokens} output tokens, $${usage.costUsd.toFixed(4)}, agent ${seconds(usage.agentMs)}, verifier ${seconds(usage.verifierMs)}, total ${seconds(usage.totalMs)}`,
      );
    }
  }
  for (const config of report.configs) lines.push(...designLines(config));
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
  lines.push(...reviewLines(report));
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
  if (provisional) lines.push(incompleteLine(report));
  // Everything above can hold run text (reasons name unknown flags, errors, skill ids).
  return lines.map(printable);
}

/**
 * The runs of a report that measured nothing: runs of pairs left out of the verdicts, runs whose
 * every attempt was lost, and control runs that failed or missed what they must reach. `line` is
 * "N of M runs could not be measured: reason (k), …"; undefined when every run measured.
 */
export function unmeasuredRunsOf(
  report: BenchReport,
): { count: number; total: number; line: string } | undefined {
  const reasons = new Map<string, number>();
  const add = (reason: string, runs: number) => {
    if (runs > 0) reasons.set(reason, (reasons.get(reason) ?? 0) + runs);
  };
  let total = report.measurement.lostRuns;
  for (const profile of report.profiles) {
    for (const outcome of profile.requirements) {
      const runs = outcome.detail.without.length + outcome.detail.with.length;
      total += runs;
      if (!outcome.measurement.measurable) add(outcome.measurement.reason, runs);
    }
  }
  add("every attempt lost to infrastructure", report.measurement.lostRuns);
  for (const control of report.controls ?? []) {
    total += control.runs.length;
    if (control.status === "unmeasured")
      add(`control ${control.agent} failed`, control.runs.length);
    if (control.status === "not-as-expected")
      add(
        `control ${control.agent} did not reach ${roundedScore(control.expectedScore)}`,
        control.runs.length,
      );
  }
  const count = [...reasons.values()].reduce((sum, value) => sum + value, 0);
  if (count === 0) return undefined;
  return {
    count,
    total,
    line: `${count} of ${plural(total, "run")} could not be measured: ${[...reasons.entries()].map(([reason, runs]) => `${reason} (${runs})`).join("; ")}`,
  };
}

/** "incomplete: k of n runs …", for a report of part of a run. */
export function incompleteLine(report: BenchReport): string {
  const completeness = report.completeness;
  if (completeness === undefined || completeness.complete) return "";
  return `incomplete: ${completeness.stored} of ${plural(completeness.planned, "run")} stored — every verdict is provisional until the run finishes (re-run the same bench run command to continue)`;
}

/** The suite, the filter, and whether the run is incomplete: what the report covers. */
function headerLines(report: BenchReport): string[] {
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
  if (report.completeness?.complete === false) lines.push(incompleteLine(report), "");
  return lines;
}

/** A score to three decimals, as controls show it. */
export function roundedScore(score: number): string {
  return String(Math.round(score * 1000) / 1000);
}

/** One arm's installed skills in words: "none", or each name with its role and digest. */
export function armSkillsText(entry: ArmSkills): string {
  if (entry.skills.length === 0) return "none";
  return entry.skills
    .map((skill) => `${skill.name} (${skill.role}, ${skill.digest.slice(0, 12)})`)
    .join(", ");
}

/** What each arm of each skill installed (the same under every configuration). */
function armSkillLines(report: BenchReport): string[] {
  const armSkills = report.armSkills ?? [];
  if (armSkills.length === 0) return [];
  const bySkill = new Map<string, ArmSkills[]>();
  for (const entry of armSkills)
    bySkill.set(entry.skill, [...(bySkill.get(entry.skill) ?? []), entry]);
  return [
    "skills installed per arm (every configuration alike):",
    ...[...bySkill].map(
      ([skill, entries]) =>
        `  ${skill}: ${entries.map((entry) => `${entry.arm}: ${armSkillsText(entry)}`).join("; ")}`,
    ),
    "",
  ];
}

/** Control configurations (none, oracle): per task what the control reached; no verdicts. */
function controlLines(report: BenchReport): string[] {
  const controls = report.controls ?? [];
  if (controls.length === 0) return [];
  const failing = controls.filter((control) => control.status !== "as-expected").length;
  return [
    `controls (agents that read no skill: they check the tasks and give no skill a verdict): ${controls.length - failing} of ${controls.length} as expected`,
    ...table([
      ["config", "task", "requirement", "score", "expected", "status"],
      ...controls.map((control) => [
        control.config,
        control.skill,
        control.requirement,
        control.score === null ? "-" : roundedScore(control.score),
        `${roundedScore(control.expectedScore)}${control.expectedFrom === "untouched-check" ? " (check)" : ""}`,
        control.status,
      ]),
    ]),
    ...controls
      .filter((control) => control.status !== "as-expected")
      .map(
        (control) =>
          `  ${control.config} / ${control.skill}/${control.requirement}: ${control.says}`,
      ),
    "",
  ];
}
