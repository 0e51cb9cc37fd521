/**
 * The self-contained HTML report of a run directory (issue 6): every figure of `BenchReport` as a
 * Vega-Lite chart plus an HTML table of the same values, with Vega, Vega-Lite and vega-embed
 * inlined so the file opens anywhere without a network.
 *
 * One file (over 400 lines) because it is the one page: each section is a small function, and they
 * share the page's layout, classes and anchors; the charts' specifications and the number formats
 * live in `chart-specs.ts` and `format.ts`.
 */

import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { armSkillsText, roundedScore } from "../bench/analysis/render.js";
import {
  type BenchReport,
  type FlagCount,
  type Profile,
  type RequirementOutcome,
  type RunDetail,
  runNeedsExplanation,
  verifierExitText,
} from "../bench/analysis/report.js";
import { RESULTS_FILE } from "../bench/store/results.js";
import { flagDefinition } from "../env/index.js";
import { armsSection, provenanceSection } from "./arms.js";
import { browserScript } from "./browser-code.js";
import {
  type Chart,
  chartContainer,
  heatmapSpec,
  requirementSpec,
  scatterSpec,
  usageSpec,
} from "./chart-specs.js";
import {
  escapeHtml,
  formatDelta,
  formatP,
  formatProfileP,
  formatRatio,
  provisionalMark,
  significant,
  verdictName,
} from "./format.js";
import { chartLibraries } from "./libraries.js";
import { loadPairViews, type PairRef, type PairView, pairPath } from "./pairs.js";
import { designSection, multiplicitySection, profileStatistics } from "./statistics.js";
import { VIEWER_STYLE } from "./viewer.js";

export { escapeHtml, formatDelta, formatP, formatRatio };

export interface HtmlReportOptions {
  /**
   * Shown under the title, e.g. the run directory. When it is a run directory (what
   * `bench report --html` passes) and `pairs` is not given, its pairs are embedded.
   */
  readonly source?: string;
  /** Default: now. Injectable so tests can compare whole documents. */
  readonly generatedAt?: Date;
  /**
   * Pair views embedded in the file: every requirement links to `#pair/<path>`, which shows the
   * side-by-side trajectory viewer from the embedded data (works offline from a file).
   */
  readonly pairs?: readonly PairView[];
  /**
   * The dashboard's page: pair links go to the served viewer (`/pair/<path>`) and the page polls
   * `stateUrl` and swaps in the new report when the store's `version` changes.
   */
  readonly live?: { readonly stateUrl: string; readonly version: string };
}

/** A report page from `<!doctype html>` to `</head>`: its metadata, title and the report style. */
export function documentHead(title: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="skillsmith">
<title>${escapeHtml(title)}</title>
<style>${REPORT_STYLE}</style>
</head>
`;
}

/**
 * JSON placed inside a <script> element: escaping `<` keeps `</script>` or `<!--` in a skill name
 * from ending the element, and U+2028/9 are escaped for older JavaScript parsers.
 */
function scriptJson(value: unknown): string {
  return JSON.stringify(value)
    .replaceAll("<", "\\u003c")
    .replaceAll(">", "\\u003e")
    .replaceAll("&", "\\u0026")
    .replaceAll("\u2028", "\\u2028")
    .replaceAll("\u2029", "\\u2029");
}

/** A library's source inside a <script> element; none of the pinned builds contains `</script`. */
function inlineScript(source: string): string {
  return source.replace(/<\/(script)/gi, "<\\/$1");
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? "" : "s"}`;
}

/** A flag as a badge: its label, its effect as a class, its description as the title. */
function flagBadge(flag: string): string {
  const definition = flagDefinition(flag);
  return `<span class="flag flag-${definition.effect}" data-testid="flag" data-flag="${escapeHtml(flag)}" title="${escapeHtml(definition.description)}">${escapeHtml(definition.label)}</span>`;
}

/** Per-flag counts as a table (what each flag does to the verdict, in how many runs/requirements). */
function flagCountsTable(counts: readonly FlagCount[], caption: string, testId: string): string {
  if (counts.length === 0) return `<p data-testid="${testId}">No run carries a flag.</p>`;
  const effects: Record<FlagCount["effect"], string> = {
    zero: "scored 0",
    "verifier-side": "left out when in both arms, else scored 0",
    unmeasured: "left out of the verdict",
    note: "shown only",
  };
  const rows = counts
    .map(
      (count) =>
        `<tr data-testid="flag-count" data-flag="${escapeHtml(count.flag)}"><th scope="row">${flagBadge(count.flag)}</th><td>${escapeHtml(effects[count.effect])}</td><td class="runs">${count.runs}</td><td class="requirements">${count.requirements}</td></tr>`,
    )
    .join("");
  return `<table data-testid="${testId}"><caption>${escapeHtml(caption)}</caption><thead><tr><th scope="col">flag</th><th scope="col">effect on the verdict</th><th scope="col">runs</th><th scope="col">requirements</th></tr></thead><tbody>${rows}</tbody></table>`;
}

function formatCount(value: number): string {
  return value.toLocaleString("en-US");
}

function formatSeconds(milliseconds: number): string {
  return `${(milliseconds / 1000).toFixed(1)} s`;
}

/** Skills ordered by their mean Δ over configurations (best first), ties by name. */
function skillOrder(report: BenchReport): string[] {
  const sums = new Map<string, { total: number; count: number }>();
  for (const profile of report.profiles) {
    const entry = sums.get(profile.skill) ?? { total: 0, count: 0 };
    if (profile.delta !== null) {
      entry.total += profile.delta;
      entry.count += 1;
    }
    sums.set(profile.skill, entry);
  }
  const overall = (skill: string): number => {
    const entry = sums.get(skill);
    return entry === undefined || entry.count === 0
      ? Number.NEGATIVE_INFINITY
      : entry.total / entry.count;
  };
  return [...sums.keys()].sort(
    (left, right) => overall(right) - overall(left) || left.localeCompare(right),
  );
}

function heatmapTable(report: BenchReport, skills: readonly string[], alpha: number): string {
  const configs = report.configs.map((config) => config.config);
  const header = configs.map((config) => `<th scope="col">${escapeHtml(config)}</th>`).join("");
  const rows = skills.map((skill) => {
    const cells = configs.map((config) => {
      const profile = report.profiles.find(
        (candidate) => candidate.skill === skill && candidate.config === config,
      );
      if (profile === undefined) return `<td class="empty">—</td>`;
      const star = significant(profile, alpha)
        ? `<span class="star" title="p &lt; ${alpha}">★</span>`
        : "";
      const provisional = provisionalMark(report);
      if (profile.unscorable !== null) {
        return `<td data-testid="heatmap-cell" data-skill="${escapeHtml(skill)}" data-config="${escapeHtml(config)}" data-unscorable="true" title="${escapeHtml(profile.unscorable)}"><span class="class">Unscorable</span>${provisional} <span class="reason">${escapeHtml(profile.unscorable)}</span></td>`;
      }
      const title = `Δ ${formatDelta(profile.delta)} pp, p ${formatProfileP(profile)}, ${verdictName(profile)}${provisional === "" ? "" : " (provisional: the run is incomplete)"}, measured ${profile.measured.measurable} of ${profile.measured.total} requirements`;
      return `<td data-testid="heatmap-cell" data-skill="${escapeHtml(skill)}" data-config="${escapeHtml(config)}" title="${escapeHtml(title)}"><span class="delta">${formatDelta(profile.delta)}</span>${star} <span class="class">${verdictName(profile)}</span>${provisional} <span class="p">p ${formatProfileP(profile)}</span></td>`;
    });
    return `<tr><th scope="row">${escapeHtml(skill)}</th>${cells.join("")}</tr>`;
  });
  return `<table id="heatmap-table" data-testid="heatmap-table"><caption>Skill-level Δ in percentage points (★: p &lt; ${alpha}, exact sign-flip test)</caption><thead><tr><th scope="col">skill</th>${header}</tr></thead><tbody>${rows.join("")}</tbody></table>`;
}

function sensitivityText(profile: Profile): string {
  if (profile.class === null) return "n/a";
  if (profile.sensitivity.disagreements.length === 0)
    return "all sensitivity analyses agree with the primary class";
  return `disagree: ${profile.sensitivity.disagreements.join(", ")}`;
}

/** Where a pair's link points, or undefined when this document has no trajectory viewer. */
type PairHref = (ref: PairRef) => string | undefined;

/** The repeats of a requirement, read from its run keys (`config/skill/requirement/arm#repeat`). */
function repeatsOf(outcome: RequirementOutcome): number[] {
  const repeats = new Set<number>();
  for (const key of [...outcome.runs.without, ...outcome.runs.with]) {
    const match = /#([0-9]+)$/.exec(key);
    if (match !== null) repeats.add(Number(match[1]));
  }
  return [...repeats].sort((left, right) => left - right);
}

function pairLinks(profile: Profile, outcome: RequirementOutcome, href: PairHref): string {
  const links = repeatsOf(outcome).flatMap((repeat) => {
    const ref = { config: profile.config, skill: profile.skill, requirement: outcome.id, repeat };
    const target = href(ref);
    if (target === undefined) return [];
    return [
      `<a href="${escapeHtml(target)}" data-testid="pair-link" data-pair="${escapeHtml(pairPath(ref))}" aria-label="${escapeHtml(`trajectories of ${profile.skill} / ${outcome.id}, repeat ${repeat}`)}">trajectories #${repeat}</a>`,
    ];
  });
  return links.length === 0 ? "—" : links.join(" ");
}

/** One flagged run: its flags, exit code, evidence and the verifier output's telling lines. */
function runExcerpt(run: RunDetail): string {
  const exit = verifierExitText(run);
  const evidence = (run.verifier?.evidence ?? []).map((line) => `evidence: ${line}`);
  const lines = [...evidence, ...run.excerpt];
  return `<details class="run-flags" data-testid="run-flags" data-run="${escapeHtml(run.key)}"><summary>${escapeHtml(`${run.arm}#${run.repeat}`)}: ${run.flags.map(flagBadge).join(" ")} (${escapeHtml(exit)})</summary>${lines.length === 0 ? `<p class="missing">The verifier printed nothing telling.</p>` : `<pre data-testid="verifier-excerpt">${escapeHtml(lines.join("\n"))}</pre>`}</details>`;
}

/** The flags cell of a requirement row: badges, why it is not measured, the flagged runs. */
function requirementFlags(outcome: RequirementOutcome): string {
  const parts: string[] = [];
  if (outcome.flags.length > 0) parts.push(outcome.flags.map(flagBadge).join(" "));
  if (!outcome.measurement.measurable) {
    parts.push(
      `<span class="unmeasured" data-testid="not-measured">not measured: ${escapeHtml(outcome.measurement.reason)}</span>`,
    );
  } else if (outcome.weakVerifier) {
    parts.push(`<span class="note">weak verifier, counted in the verdict</span>`);
  }
  if (outcome.identical && outcome.measurement.measurable) parts.push("identical");
  if (outcome.misplaced.length > 0)
    parts.push(`misplaced: ${outcome.misplaced.map(escapeHtml).join(", ")}`);
  const runs = [...outcome.detail.without, ...outcome.detail.with]
    .filter(runNeedsExplanation)
    .map(runExcerpt);
  const lost = outcome.lost.map(
    (run) =>
      `<p class="lost" data-testid="lost-run">${escapeHtml(`${run.arm}#${run.repeat} lost to infrastructure after ${plural(run.attempts, "attempt")}: ${run.lastError}`)}</p>`,
  );
  return [parts.join("; "), ...runs, ...lost].filter((text) => text !== "").join("");
}

function profileSection(
  profile: Profile,
  chart: Chart | undefined,
  alpha: number,
  href: PairHref | undefined,
  provisional: string,
): string {
  const rows = profile.requirements
    .map((outcome) => {
      const measurable = outcome.measurement.measurable;
      const delta = measurable ? formatDelta(outcome.delta) : "not measured";
      return `<tr data-testid="requirement-row" data-requirement="${escapeHtml(outcome.id)}" data-measurable="${measurable}"><th scope="row">${escapeHtml(outcome.id)}</th><td>${formatRatio(outcome.without)}</td><td>${formatRatio(outcome.with)}</td><td class="delta">${delta}</td><td class="flags">${requirementFlags(outcome)}</td>${href === undefined ? "" : `<td>${pairLinks(profile, outcome, href)}</td>`}</tr>`;
    })
    .join("");
  const notes =
    profile.notes.length === 0
      ? ""
      : `<ul class="notes">${profile.notes.map((note) => `<li>${escapeHtml(note)}</li>`).join("")}</ul>`;
  const activation =
    profile.activation_rate === null
      ? "unknown (the harness cannot tell)"
      : formatRatio(profile.activation_rate);
  return `<section class="profile" data-testid="profile" data-skill="${escapeHtml(profile.skill)}" data-config="${escapeHtml(profile.config)}">
<h3>${escapeHtml(profile.skill)} <small>under ${escapeHtml(profile.config)}</small></h3>
<dl class="summary">
${profile.unscorable === null ? "" : `<dt>verdict</dt><dd data-testid="unscorable">Unscorable: ${escapeHtml(profile.unscorable)}${provisional}</dd>`}
<dt>measured</dt><dd data-testid="measured">${profile.measured.measurable} of ${plural(profile.measured.total, "requirement")}</dd>
<dt>pass ratio without → with</dt><dd>${formatRatio(profile.without)} → ${formatRatio(profile.with)}</dd>
<dt>Δ</dt><dd>${formatDelta(profile.delta)} pp${significant(profile, alpha) ? " ★" : ""}</dd>
<dt>p (sign-flip, n = ${profile.n})</dt><dd>${formatProfileP(profile)}</dd>
<dt>class</dt><dd data-testid="class">${verdictName(profile)}${provisional}</dd>
${profile.review === undefined ? "" : `<dt>needs review</dt><dd data-testid="needs-review">the patch scan found evidence in ${plural(profile.review.runs.length, "run")} no person has reviewed: ${escapeHtml(profile.review.runs.join(", "))}; \`skillsmith bench review\` lists the findings</dd>`}
${profileStatistics(profile, provisional)}
<dt>sensitivity</dt><dd>${escapeHtml(sensitivityText(profile))} (t-test p ${formatP(profile.sensitivity.ttest.p)}, Wilcoxon p ${formatP(profile.sensitivity.wilcoxon.p)})</dd>
<dt>activation rate</dt><dd>${activation}</dd>
</dl>
${notes}
${flagCountsTable(profile.flagCounts, "Flags in this skill's runs", "profile-flag-counts")}
<div class="pair">${chart === undefined ? `<p class="missing" data-testid="no-chart">No measurable requirement to chart.</p>` : chartContainer(chart, `Requirement deltas of measurable requirements of ${profile.skill} under ${profile.config}`)}
<table data-testid="requirements"><caption>Requirements (mean pass ratio over repeats; only measurable ones enter the verdict)</caption><thead><tr><th scope="col">requirement</th><th scope="col">without</th><th scope="col">with</th><th scope="col">d (pp)</th><th scope="col">flags</th>${href === undefined ? "" : `<th scope="col">side by side</th>`}</tr></thead><tbody>${rows}</tbody></table></div>
</section>`;
}

function pooledSection(report: BenchReport): string {
  const rows = report.configs
    .map(
      (config) =>
        `<tr data-testid="pooled-row" data-config="${escapeHtml(config.config)}"><th scope="row">${escapeHtml(config.config)}</th><td>${escapeHtml([config.agent, config.model].filter((part) => part !== undefined).join(" / ") || "—")}</td><td>${config.skills}</td><td>${config.pairs}${config.unmeasuredPairs === 0 ? "" : ` (${config.unmeasuredPairs} left out)`}</td><td class="pooled-ratios">${formatRatio(config.without)} → ${formatRatio(config.with)}</td><td>${formatDelta(config.delta)}</td><td>${config.classes.golden} / ${config.classes.harmful} / ${config.classes.ineffective} / ${config.unscorable}</td></tr>`,
    )
    .join("");
  const all = report.pooled;
  const identical = report.pairs.identical;
  const large = report.pairs.largeChanges;
  const largeRows = large.keys
    .map(
      (key) =>
        `<tr><td>${escapeHtml(key.config)}</td><td>${escapeHtml(key.skill)}</td><td>${escapeHtml(key.requirement)}</td><td>${formatDelta(100 * key.deltaY)}</td></tr>`,
    )
    .join("");
  return `<section id="pooled"><h2>Pooled per configuration</h2>
<table id="pooled-table" data-testid="pooled-table"><thead><tr><th scope="col">configuration</th><th scope="col">agent / model</th><th scope="col">skills</th><th scope="col">pairs</th><th scope="col">without → with</th><th scope="col">Δ (pp)</th><th scope="col">golden / harmful / ineffective / unscorable</th></tr></thead>
<tbody>${rows}</tbody>
<tfoot><tr data-testid="pooled-all"><th scope="row">all</th><td></td><td></td><td>${all.pairs}</td><td class="pooled-ratios">${formatRatio(all.without)} → ${formatRatio(all.with)}</td><td>${formatDelta(all.delta)}</td><td></td></tr></tfoot></table>
<p>Identical pairs: <strong data-testid="identical-share">${identical.count} of ${report.pairs.total} (${formatRatio(identical.share)})</strong>. Timeouts (agent or verifier): <strong data-testid="timeouts">${report.pairs.timeouts}</strong> measured pair${report.pairs.timeouts === 1 ? "" : "s"}. Misplaced deliverables: ${report.pairs.misplacedDeliverables.count}.</p>
<h3>Large changes (|Δy| ≥ ${large.threshold}): ${large.count}</h3>
${large.count === 0 ? "<p>None.</p>" : `<table data-testid="large-changes"><thead><tr><th scope="col">configuration</th><th scope="col">skill</th><th scope="col">requirement</th><th scope="col">d (pp)</th></tr></thead><tbody>${largeRows}</tbody></table>`}
</section>`;
}

/** What could not be measured: the rule, every pair left out with its reason, unscorable skills, flags. */
function measurementSection(report: BenchReport): string {
  const { measurement } = report;
  const unmeasuredRows = measurement.unmeasured
    .map(
      (item) =>
        `<tr data-testid="unmeasured-pair" data-skill="${escapeHtml(item.skill)}" data-requirement="${escapeHtml(item.requirement)}"><td>${escapeHtml(item.config)}</td><td>${escapeHtml(item.skill)}</td><td>${escapeHtml(item.requirement)}</td><td>${item.flags.map(flagBadge).join(" ")}</td><td>${escapeHtml(item.reason)}</td></tr>`,
    )
    .join("");
  const unscorableRows = report.unscorable
    .map(
      (item) =>
        `<li data-testid="unscorable-skill" data-skill="${escapeHtml(item.skill)}" data-config="${escapeHtml(item.config)}"><strong>${escapeHtml(item.skill)}</strong> under ${escapeHtml(item.config)}: ${escapeHtml(item.reason)}</li>`,
    )
    .join("");
  return `<section id="measurement"><h2>What could be measured</h2>
<p data-testid="measurable-rule">Verdicts use measurable pairs only: <strong data-testid="measurable-pairs">${measurement.measurable} of ${plural(measurement.pairs, "pair")}</strong> measured. A pair is left out when its verifier failed in both arms, when its environment or verifier was found broken, or when every attempt of an arm was lost to infrastructure; a skill with nothing measurable has no verdict (unscorable).</p>
${measurement.unmeasured.length === 0 ? "" : `<table data-testid="unmeasured-pairs"><caption>Pairs left out of the verdicts</caption><thead><tr><th scope="col">configuration</th><th scope="col">skill</th><th scope="col">requirement</th><th scope="col">flags</th><th scope="col">reason</th></tr></thead><tbody>${unmeasuredRows}</tbody></table>`}
${report.unscorable.length === 0 ? "" : `<h3>Unscorable skills: ${report.unscorable.length}</h3><ul data-testid="unscorable-skills">${unscorableRows}</ul>`}
${flagCountsTable(report.flagCounts, "Flags over all runs", "flag-counts")}
</section>`;
}

/** A report of part of a run says so before anything else: its verdicts are provisional. */
function completenessBanner(report: BenchReport): string {
  const completeness = report.completeness;
  if (completeness === undefined || completeness.complete) return "";
  return `<p class="meta" role="status" data-testid="incomplete"><strong>incomplete: ${completeness.stored} of ${plural(completeness.planned, "run")}</strong> stored — every verdict on this page is provisional until the run finishes.</p>`;
}

/** What each arm of each skill installed: the skills under test and the distractors. */
function armSkillsSection(report: BenchReport): string {
  const armSkills = report.armSkills ?? [];
  if (armSkills.length === 0) return "";
  const rows = armSkills
    .map(
      (entry) =>
        `<tr data-testid="arm-skills" data-skill="${escapeHtml(entry.skill)}" data-arm="${escapeHtml(entry.arm)}"><td>${escapeHtml(entry.skill)}</td><td>${escapeHtml(entry.arm)}</td><td>${escapeHtml(armSkillsText(entry))}</td></tr>`,
    )
    .join("");
  return `<section id="arm-skills"><h2>Skills installed per arm</h2>
<p>What the agent had in each arm, under every configuration alike: the skills under test (treatment) and the distractors every arm gets, with the first digits of their content digest.</p>
<table data-testid="arm-skills-table"><thead><tr><th scope="col">skill</th><th scope="col">arm</th><th scope="col">installed skills</th></tr></thead><tbody>${rows}</tbody></table>
</section>`;
}

/** Control configurations (none, oracle): what each reached per task; they give no verdict. */
function controlsSection(report: BenchReport): string {
  const controls = report.controls ?? [];
  if (controls.length === 0) return "";
  const rows = controls
    .map(
      (control) =>
        `<tr data-testid="control" data-config="${escapeHtml(control.config)}" data-skill="${escapeHtml(control.skill)}" data-requirement="${escapeHtml(control.requirement)}" data-status="${control.status}"><td>${escapeHtml(control.config)}</td><td>${escapeHtml(control.skill)}</td><td>${escapeHtml(control.requirement)}</td><td>${control.score === null ? "-" : escapeHtml(roundedScore(control.score))}</td><td>${escapeHtml(roundedScore(control.expectedScore))}${control.expectedFrom === "untouched-check" ? " (check)" : ""}</td><td>${escapeHtml(control.says)}</td></tr>`,
    )
    .join("");
  return `<section id="controls"><h2>Controls</h2>
<p>These configurations run agents that read no skill (${escapeHtml([...new Set(controls.map((control) => control.agent))].join(", "))}): they check the tasks and give no skill a verdict.</p>
<table data-testid="controls"><thead><tr><th scope="col">configuration</th><th scope="col">task</th><th scope="col">requirement</th><th scope="col">score</th><th scope="col">expected</th><th scope="col">what it says</th></tr></thead><tbody>${rows}</tbody></table>
</section>`;
}

function scatterSection(report: BenchReport, charts: Chart[]): string {
  const configs = report.configs.map((config) => config.config);
  if (configs.length < 2) {
    return `<section id="scatter"><h2>Δ between configurations</h2><p data-testid="scatter-note">This run has one configuration (${escapeHtml(configs[0] ?? "none")}), so there is no second configuration to compare skill-level Δ against.</p></section>`;
  }
  const parts: string[] = [];
  for (let left = 0; left < configs.length; left += 1) {
    for (let right = left + 1; right < configs.length; right += 1) {
      const a = configs[left] as string;
      const b = configs[right] as string;
      const chart = scatterSpec(report, a, b, parts.length);
      charts.push(chart);
      const correlation = report.correlations.find(
        (candidate) => candidate.configs[0] === a && candidate.configs[1] === b,
      );
      const signChange = report.signChanges.find(
        (candidate) => candidate.configs[0] === a && candidate.configs[1] === b,
      );
      const correlationText =
        correlation === undefined
          ? "Too few shared skills (fewer than 3) for a correlation."
          : `Pearson r = ${correlation.pearson?.toFixed(2) ?? "n/a"}, Spearman ρ = ${correlation.spearman?.toFixed(2) ?? "n/a"} over ${correlation.skills} skills.`;
      const rows = (
        chart.spec.data as { values: Array<{ skill: string; x: number; y: number }> }
      ).values
        .map(
          (point) =>
            `<tr><th scope="row">${escapeHtml(point.skill)}</th><td>${formatDelta(point.x)}</td><td>${formatDelta(point.y)}</td></tr>`,
        )
        .join("");
      parts.push(`<div class="scatter"><h3>${escapeHtml(a)} against ${escapeHtml(b)}</h3>
<p>${escapeHtml(correlationText)} Sign changes: ${signChange?.count ?? 0} of ${signChange?.compared ?? 0}.</p>
<div class="pair">${chartContainer(chart, `Skill-level Δ under ${a} against ${b}`)}
<table><thead><tr><th scope="col">skill</th><th scope="col">Δ ${escapeHtml(a)}</th><th scope="col">Δ ${escapeHtml(b)}</th></tr></thead><tbody>${rows}</tbody></table></div></div>`);
    }
  }
  return `<section id="scatter"><h2>Δ between configurations</h2>${parts.join("\n")}</section>`;
}

function usageSection(report: BenchReport, chart: Chart): string {
  const rows = report.configs
    .flatMap((config) =>
      (["without", "with"] as const).map((arm) => {
        const usage = config.usage[arm];
        return `<tr data-testid="usage-row" data-config="${escapeHtml(config.config)}" data-arm="${arm}"><th scope="row">${escapeHtml(config.config)}</th><td>${arm}</td><td>${usage.runs}</td><td>$${usage.costUsd.toFixed(4)}</td><td>${formatCount(usage.inputTokens)}</td><td>${formatCount(usage.cachedInputTokens)}</td><td>${formatCount(usage.outputTokens)}</td><td>${formatSeconds(usage.agentMs)}</td><td>${formatSeconds(usage.verifierMs)}</td><td>${formatSeconds(usage.totalMs)}</td></tr>`;
      }),
    )
    .join("");
  return `<section id="usage"><h2>Cost, tokens and wall time per arm</h2>
<div class="pair">${chartContainer(chart, "Wall time per configuration and arm")}
<table id="usage-table"><thead><tr><th scope="col">configuration</th><th scope="col">arm</th><th scope="col">runs</th><th scope="col">cost (USD)</th><th scope="col">input tokens</th><th scope="col">cached input</th><th scope="col">output tokens</th><th scope="col">agent time</th><th scope="col">verifier time</th><th scope="col">wall time</th></tr></thead><tbody>${rows}</tbody></table></div>
<p>Runs scored: ${report.runs.scored}; attempts lost to infrastructure: ${report.runs.infraAttempts}; runs never scored (every attempt lost): <span data-testid="lost-runs">${report.measurement.lostRuns}</span>.</p></section>`;
}

/** The report's style (the viewer's included), also used by the dashboard's own pages. */
export const REPORT_STYLE = `${VIEWER_STYLE}
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:2rem auto;max-width:72rem;padding:0 1rem;color:#1b1b1b}
h1{margin-bottom:.2rem}h2{margin-top:2.5rem;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:.5rem 0;font-size:.9rem}
th,td{border:1px solid #ddd;padding:.25rem .5rem;text-align:left;vertical-align:top}
caption{text-align:left;font-weight:600;padding:.25rem 0}
.pair{display:flex;flex-wrap:wrap;gap:1.5rem;align-items:flex-start}
.star{color:#b35900;font-weight:bold}.meta{color:#555}
dl.summary{display:grid;grid-template-columns:max-content auto;gap:.15rem 1rem}dt{font-weight:600}dd{margin:0}
.chart-error{color:#a00}
.flag{display:inline-block;border-radius:3px;padding:0 .35rem;font-size:.8rem;font-weight:600;border:1px solid #999;background:#f4f4f4}
.flag-zero{border-color:#b35900;background:#fff0e0}.flag-verifier-side{border-color:#8a5a00;background:#fff7d6}
.flag-unmeasured{border-color:#a00;background:#fde8e8}.flag-note{border-color:#1f5fa8;background:#e6f0fa}
.unmeasured{color:#a00;font-weight:600}.lost{color:#a00;margin:.2rem 0}.missing{color:#555;font-style:italic}
td.flags details{margin:.2rem 0}td.flags pre{white-space:pre-wrap;word-break:break-word;background:#f6f6f6;padding:.3rem;margin:.2rem 0;font-size:.8rem;max-width:40rem}
td[data-unscorable] .reason{display:block;font-size:.8rem;color:#555;max-width:20rem}
#live-status{font-size:.85rem}
`;

/** JSON for the page's live loop: where to poll and which store version the page shows. */
function liveConfig(live: NonNullable<HtmlReportOptions["live"]>): string {
  return scriptJson({ stateUrl: live.stateUrl, version: live.version, intervalMs: 1000 });
}

/**
 * Per-text limit for pairs embedded in the static file, which holds every pair of the run; the
 * dashboard serves one pair at a time with the larger default.
 */
export const EMBEDDED_TEXT_LIMIT = 4_000;

/** Pair views to embed: the given ones, else those of `source` when it is a run directory. */
function embeddedPairs(
  report: BenchReport,
  options: HtmlReportOptions,
): readonly PairView[] | undefined {
  if (options.pairs !== undefined) return options.pairs;
  if (options.live !== undefined || options.source === undefined) return undefined;
  const store = join(options.source, RESULTS_FILE);
  if (!existsSync(store) || !statSync(options.source).isDirectory()) return undefined;
  // Only the pairs the report shows (a filtered report links to a subset of the run).
  const shown = new Set(
    report.profiles.flatMap((profile) =>
      profile.requirements.map((outcome) =>
        JSON.stringify([profile.config, profile.skill, outcome.id]),
      ),
    ),
  );
  return loadPairViews(options.source, {
    textLimit: EMBEDDED_TEXT_LIMIT,
    verifierOutputLimit: EMBEDDED_TEXT_LIMIT,
  }).filter((pair) => shown.has(JSON.stringify([pair.config, pair.skill, pair.requirement])));
}

/** One self-contained HTML document for a run's report (no network needed to open it). */
export function renderHtmlReport(report: BenchReport, options: HtmlReportOptions = {}): string {
  const alpha = 0.05;
  const skills = skillOrder(report);
  const pairs = embeddedPairs(report, options);
  const embeddedIds = new Set(pairs?.map((pair) => pair.id));
  const href: PairHref | undefined =
    options.live !== undefined
      ? (ref) => `/pair/${pairPath(ref)}`
      : pairs === undefined
        ? undefined
        : (ref) => (embeddedIds.has(pairPath(ref)) ? `#pair/${pairPath(ref)}` : undefined);
  const charts: Chart[] = [];
  const heatmap = heatmapSpec(report, skills, alpha);
  charts.push(heatmap);
  const orderedProfiles = [...report.profiles].sort(
    (left, right) =>
      skills.indexOf(left.skill) - skills.indexOf(right.skill) ||
      left.config.localeCompare(right.config),
  );
  const profileSections = orderedProfiles.map((profile, index) => {
    // An unscorable profile has no measurable requirement: no chart, its table says why.
    const chart = profile.n === 0 ? undefined : requirementSpec(profile, index);
    if (chart !== undefined) charts.push(chart);
    return profileSection(profile, chart, alpha, href, provisionalMark(report));
  });
  const scatter = scatterSection(report, charts);
  const usage = usageSpec(report);
  charts.push(usage);
  const title =
    report.suite === undefined
      ? "Skill evaluation report"
      : `Skill evaluation: ${report.suite.name}`;
  const generated = (options.generatedAt ?? new Date()).toISOString();
  const libraries = chartLibraries();
  return `${documentHead(title)}<body${options.live === undefined ? "" : ` data-version="${escapeHtml(options.live.version)}"`}>
<header>
<h1>${escapeHtml(title)}</h1>
<p class="meta">${options.source === undefined ? "" : `Run directory ${escapeHtml(options.source)} · `}${options.live === undefined ? "generated" : "read"} ${escapeHtml(generated)} · ${report.configs.length} configuration${report.configs.length === 1 ? "" : "s"}, ${skills.length} skill${skills.length === 1 ? "" : "s"}, ${report.pooled.pairs} measured pairs of ${report.measurement.pairs}</p>
${report.filter === undefined ? "" : `<p class="meta" data-testid="filter">Filtered to ${escapeHtml([...(report.filter.skills === undefined ? [] : [`skills ${report.filter.skills.join(", ")}`]), ...(report.filter.requirements === undefined ? [] : [`requirements ${report.filter.requirements.join(", ")}`])].join("; "))}: the verdicts cover these runs only.</p>`}
${completenessBanner(report)}
${options.live === undefined ? "" : `<p class="meta" id="live-status" role="status" data-testid="live-status">live: the page updates while the run is in progress</p>`}
</header>
<main data-report="true">
<section id="heatmap"><h2>Skill-level Δ</h2>
<p>Δ is the mean over requirements of 100·(pass ratio with the skill − without), in percentage points. Colours are centred on zero (blue: worse, orange: better). Skills are sorted by their mean Δ over configurations.</p>
<div class="pair">${chartContainer(heatmap, "Heatmap of skill-level Δ, skills by configurations")}
${heatmapTable(report, skills, alpha)}</div>
</section>
${armSkillsSection(report)}
${controlsSection(report)}
${multiplicitySection(report)}
${armsSection(report)}
${provenanceSection(report)}
<section id="profiles"><h2>Per skill</h2>
${profileSections.join("\n")}
</section>
${measurementSection(report)}
${pooledSection(report)}
${designSection(report)}
${scatter}
${usageSection(report, usage)}
</main>
<footer class="meta"><p>Charts: ${libraries.map((library) => `${escapeHtml(library.name)} ${escapeHtml(library.version)}`).join(", ")}, inlined.</p></footer>
<script type="application/json" id="report-charts">${scriptJson(charts)}</script>
${libraries.map((library) => `<script data-library="${escapeHtml(library.name)}">${inlineScript(library.source)}</script>`).join("\n")}
<script>${browserScript("charts")}</script>
${
  pairs === undefined
    ? ""
    : `<section id="pair-viewer" hidden></section>
<script type="application/json" id="report-pairs">${scriptJson(pairs)}</script>
<script>${browserScript("viewer")}</script>
<script>${browserScript("router")}</script>`
}${
  options.live === undefined
    ? ""
    : `<script type="application/json" id="report-live">${liveConfig(options.live)}</script>
<script>${browserScript("live")}</script>`
}
</body>
</html>
`;
}
