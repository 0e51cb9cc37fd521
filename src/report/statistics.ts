/**
 * The statistics across many skills in the HTML report: BH q and the FDR class per profile,
 * what each test could detect, the within-requirement spread of repeats, the multiple-testing
 * summary under the verdict heatmap, and the design recommendation per configuration. Kept here
 * so `html.ts` only places them. Every value from the run is escaped.
 */
import type { BenchReport, Profile } from "../bench/analysis/report.js";
import { describeShiftInterval, INEFFECTIVE_DEFINITION, type SkillClass } from "../stats/index.js";
// A cycle with html.ts, which places these sections; only called at render time, so harmless.
import { escapeHtml, provisionalMark } from "./format.js";

const CLASS_NAMES: Record<SkillClass, string> = {
  golden: "Golden",
  harmful: "Harmful",
  ineffective: "Ineffective",
  undecided: "Undecided",
};

function pText(value: number | null): string {
  if (value === null) return "—";
  return value < 0.0001 ? "&lt;0.0001" : value.toFixed(4);
}

function points(value: number): string {
  return `${value > 0 ? "+" : ""}${value.toFixed(1)}`;
}

/** A profile's p; a "dp-bounds" p is an upper bound (exact p in [pLower, p]) and says so. */
export function profilePText(profile: Profile): string {
  if (profile.pMethod?.method !== "dp-bounds" || profile.p === null) return pText(profile.p);
  const lower = profile.pMethod.pLower;
  return `≤ ${pText(profile.p)}<span class="p-bound" title="an upper bound: the exact p lies in [${lower === undefined ? "?" : pText(lower)}, ${pText(profile.p)}]"> (bound)</span>`;
}

/** The definition of the classes, beside every place that shows them. */
export function classDefinitions(): string {
  return `<p class="definition" data-testid="ineffective-definition">${escapeHtml(INEFFECTIVE_DEFINITION)}. Undecided = the exact p is known only as a bracket that contains α, so no class is given.</p>`;
}

/** `<dt>/<dd>` pairs for a profile's summary list. */
export function profileStatistics(profile: Profile, provisional = ""): string {
  if (profile.unscorable !== null) return "";
  const parts = [
    `<dt>q (Benjamini–Hochberg)</dt><dd data-testid="q-value">${pText(profile.q)}</dd>`,
    `<dt>class under FDR control</dt><dd data-testid="class-fdr">${profile.classFdr === null ? "—" : `${CLASS_NAMES[profile.classFdr]}${provisional}`}</dd>`,
  ];
  const effect = profile.detectable;
  if (effect !== null) {
    const interval =
      effect.interval.none !== undefined
        ? `no interval: ${escapeHtml(effect.interval.none)}`
        : effect.interval.lower === null || effect.interval.upper === null
          ? `no uniform effect can be ruled out with ${effect.n} requirements`
          : `ruled out: a uniform effect below ${points(effect.interval.lower)} or above ${points(effect.interval.upper)} pp (${escapeHtml(describeShiftInterval(effect.interval))})`;
    const zeros = effect.anyEffectDetectable
      ? ""
      : `; only ${effect.nonZero} of ${effect.n} deltas are non-zero, so the smallest attainable p is ${pText(effect.minimumP)} ≥ α: no size of these deltas could have given a verdict`;
    parts.push(`<dt>detectable</dt><dd data-testid="detectable">${interval}${zeros}</dd>`);
  }
  const variability = profile.variability;
  if (variability !== null && (variability.without.sd !== null || variability.with.sd !== null)) {
    const sd = (value: number | null) => (value === null ? "—" : value.toFixed(1));
    parts.push(
      `<dt>within-requirement SD (${variability.repeats.toFixed(1)} repeats, pooled)</dt><dd data-testid="within-sd">without ${sd(variability.without.sd)}, with ${sd(variability.with.sd)} pp</dd>`,
    );
  }
  return parts.join("\n");
}

/** The multiple-testing summary, placed under the verdict heatmap. */
export function multiplicitySection(report: BenchReport): string {
  const table = report.multiplicity;
  if (table.tested === 0) return "";
  const expected = table.expectedFalseDiscoveries;
  const provisional = provisionalMark(report);
  const rows = report.profiles
    .filter((profile) => profile.p !== null)
    .map(
      (profile) =>
        `<tr data-testid="multiplicity-row" data-skill="${escapeHtml(profile.skill)}" data-config="${escapeHtml(profile.config)}"><td>${escapeHtml(profile.config)}</td><td>${escapeHtml(profile.skill)}</td><td>${profilePText(profile)}</td><td>${profile.class === null ? "—" : `${CLASS_NAMES[profile.class]}${provisional}`}</td><td>${pText(profile.q)}</td><td>${profile.classFdr === null ? "—" : `${CLASS_NAMES[profile.classFdr]}${provisional}`}</td></tr>`,
    )
    .join("");
  const notTested = table.notTested
    .map(
      (item) =>
        `<li>${escapeHtml(item.skill)} under ${escapeHtml(item.config)}: ${escapeHtml(item.reason)}</li>`,
    )
    .join("");
  return `<section id="multiplicity"><h2>Many skills at once</h2>
<table data-testid="multiplicity"><caption>Raw p and Benjamini–Hochberg q over the ${table.tested} tested profiles</caption><thead><tr><th scope="col">configuration</th><th scope="col">skill</th><th scope="col">p (sign-flip)</th><th scope="col">class</th><th scope="col">q (BH)</th><th scope="col">class (FDR)</th></tr></thead><tbody>${rows}</tbody></table>
<p data-testid="expected-false-discoveries">${table.discoveries.raw} with p &lt; ${table.alpha}; ${table.discoveries.fdr} with q &lt; ${table.alpha}. If no skill had any effect, <strong>${expected.globalNull.toFixed(2)}</strong> profiles would be expected to reach p &lt; ${table.alpha} by chance: the sum of each test's exact size at α given its deltas${expected.exactSizes === table.tested ? "" : ` (α for the ${table.tested - expected.exactSizes} whose size is not known exactly)`}, at most m·α = ${expected.bound.toFixed(2)}. The FDR classes keep the expected share of false discoveries among them at most ${table.fdrLevel} (Benjamini–Hochberg over one family of ${table.familySize ?? table.tested} tests${(table.familySize ?? table.tested) > table.tested ? `: the profiles and ${(table.familySize ?? table.tested) - table.tested} other arm pairs` : ""}; tests independent or positively dependent).</p>
${classDefinitions()}
${table.notTested.length === 0 ? "" : `<p>Not tested (nothing measurable):</p><ul data-testid="not-tested">${notTested}</ul>`}
</section>`;
}

/** Per configuration: requirements (and repeats) that would detect the chosen effect. */
export function designSection(report: BenchReport): string {
  const items = report.configs.flatMap((config) => {
    const design = config.design;
    if (design === null) return [];
    const rows = design.rows
      .map(
        (row) =>
          `<tr><td>${row.repeats}</td><td>${row.sd.toFixed(1)}</td><td>${row.requirements === null ? "more than 1000" : row.requirements}</td><td>${row.power.toFixed(2)}</td></tr>`,
      )
      .join("");
    return [
      `<div data-testid="design" data-config="${escapeHtml(config.config)}"><h3>${escapeHtml(config.config)}: to detect ${points(design.effect)} pp with ${Math.round(100 * design.targetPower)}% power at α = ${design.alpha}</h3>
<table><thead><tr><th scope="col">repeats</th><th scope="col">σ of requirement deltas (pp)</th><th scope="col">requirements needed</th><th scope="col">power there</th></tr></thead><tbody>${rows}</tbody></table>
<p>σ = ${design.sd.toFixed(1)} pp pooled over ${design.profiles} skill${design.profiles === 1 ? "" : "s"} (${design.df} df)${design.within === null ? "" : `; between-requirement SD ${design.within.betweenSd.toFixed(1)}, within-requirement variance of both arms ${design.within.variance.toFixed(1)} pp² over ${design.within.repeats.toFixed(1)} repeats`}. Model: ${escapeHtml(design.model)}; ${design.draws} draws, seed ${design.seed}.</p>${design.passRatio === null || design.passRatio === undefined ? "" : `<p data-testid="design-pass-ratio">Pass-ratio model (${escapeHtml(design.passRatio.model)}; ${design.passRatio.trials} checks × repeats per arm, ${design.passRatio.draws} draws, seed ${design.passRatio.seed}): <strong>${design.passRatio.requirements === null ? `more than ${design.passRatio.maxRequirements}` : design.passRatio.requirements}</strong> requirements at the repeats used (power ${design.passRatio.power.toFixed(3)}).</p>`}</div>`,
    ];
  });
  return items.length === 0
    ? ""
    : `<section id="design"><h2>How many requirements would detect an effect</h2>${items.join("\n")}</section>`;
}
