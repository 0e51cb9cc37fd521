import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { infraAttempt, runResult, verifierRecord } from "../../test/support/results.js";
import {
  type ArmUsage,
  type BenchReport,
  buildReport,
  type Profile,
  REPORT_FORMAT,
} from "../bench/analysis/report.js";
import { packageRoot } from "../core/paths.js";
import { escapeHtml, formatDelta, formatP, formatRatio, renderHtmlReport } from "./html.js";

const PLANTED = '<script>alert("x")</script>';

const NO_USAGE: ArmUsage = {
  runs: 2,
  inputTokens: 1200,
  cachedInputTokens: 0,
  outputTokens: 340,
  costUsd: 0.0125,
  agentMs: 1000,
  verifierMs: 500,
  totalMs: 1500,
};

function profile(skill: string, config: string, delta: number, p: number): Profile {
  return {
    skill,
    config,
    requirements: [
      {
        id: "r1",
        without: 0.5,
        with: 0.5 + delta / 100,
        delta,
        spread: { without: null, with: null },
        measurement: { measurable: true },
        flags: [],
        timeout: false,
        weakVerifier: false,
        identical: false,
        misplaced: [],
        runs: { without: [], with: [] },
        detail: { without: [], with: [] },
        lost: [],
      },
    ],
    n: 1,
    measured: { total: 1, measurable: 1, unmeasured: [] },
    unscorable: null,
    without: 0.5,
    with: 0.5 + delta / 100,
    delta,
    p,
    class: p < 0.05 ? (delta > 0 ? "golden" : "harmful") : "ineffective",
    q: null,
    classFdr: null,
    detectable: null,
    variability: null,
    sensitivity: {
      ttest: { p, class: null },
      wilcoxon: { p, class: null },
      withoutTimeouts: { n: 1, delta, p, class: null },
      disagreements: [],
    },
    flagCounts: [],
    weakVerifiers: [],
    lostRuns: 0,
    activation_rate: 0.5,
    notes: [`note about ${skill}`],
  };
}

/** Two configurations, three skills; one skill name carries a planted script. */
function fixture(): BenchReport {
  const profiles = [
    profile("alpha", "a", 10, 0.5),
    profile("beta", "a", 30, 0.01),
    profile(PLANTED, "a", -20, 0.02),
    profile("alpha", "b", 20, 0.4),
    profile("beta", "b", 40, 0.03),
    profile(PLANTED, "b", -10, 0.6),
  ];
  const config = (id: string) => ({
    config: id,
    skills: 3,
    pairs: 3,
    unmeasuredPairs: 0,
    without: 0.5,
    with: 0.6,
    delta: 10,
    classes: { golden: 1, harmful: 0, ineffective: 2 },
    unscorable: 0,
    classesFdr: { golden: 0, harmful: 0, ineffective: 3 },
    design: null,
    usage: { without: NO_USAGE, with: NO_USAGE },
  });
  return {
    format: REPORT_FORMAT,
    statistics: { alpha: 0.05, detectEffect: 10, targetPower: 0.8, powerDraws: 1000, seed: 1 },
    profiles,
    multiplicity: {
      alpha: 0.05,
      method: "benjamini-hochberg",
      tested: 6,
      familySize: 6,
      ineffective:
        "Ineffective = no effect detected at α with these requirements (not evidence of no effect)",
      notTested: [],
      discoveries: { raw: 3, fdr: 0 },
      expectedFalseDiscoveries: { globalNull: 0.3, bound: 0.3, exactSizes: 0 },
      fdrLevel: 0.05,
    },
    configs: [config("a"), config("b")],
    pooled: { pairs: 6, without: 0.5, with: 0.6, delta: 10 },
    measurement: { pairs: 6, measurable: 6, unmeasured: [], lostRuns: 0 },
    unscorable: [],
    flagCounts: [],
    pairs: {
      total: 6,
      identical: { count: 0, share: 0, keys: [] },
      largeChanges: { threshold: 0.5, count: 0, keys: [] },
      misplacedDeliverables: { count: 0, keys: [] },
      timeouts: 0,
    },
    correlations: [{ configs: ["a", "b"], skills: 3, pearson: 0.97, spearman: 1 }],
    signChanges: [{ configs: ["a", "b"], compared: 3, count: 0, skills: [] }],
    runs: { scored: 24, infraAttempts: 0 },
  };
}

describe("renderHtmlReport", () => {
  const html = renderHtmlReport(fixture(), { generatedAt: new Date("2026-01-02T03:04:05Z") });

  it("escapes text from the run in markup and in the embedded chart JSON", () => {
    expect(html).not.toContain(PLANTED);
    expect(html).toContain("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;");
    const charts = /<script type="application\/json" id="report-charts">([\s\S]*?)<\/script>/.exec(
      html,
    );
    expect(charts?.[1]).toBeDefined();
    expect(charts?.[1]).not.toContain("<");
    // The JSON still decodes to the original name, so charts label the skill correctly.
    expect(charts?.[1]).toContain("\\u003cscript\\u003e");
    expect(
      JSON.parse(charts?.[1] ?? "[]")[0].spec.data.values.map(
        (value: { skill: string }) => value.skill,
      ),
    ).toContain(PLANTED);
  });

  it("inlines the installed Vega, Vega-Lite and vega-embed builds verbatim", () => {
    for (const name of ["vega", "vega-lite", "vega-embed"]) {
      const source = readFileSync(
        join(packageRoot(), "node_modules", name, "build", `${name}.min.js`),
        "utf8",
      );
      expect(html).toContain(`<script data-library="${name}">${source}</script>`);
    }
    expect(html).not.toMatch(/<script[^>]+src=/);
  });

  it("sorts skills by mean Δ over configurations and stars p < 0.05", () => {
    // means: beta (30+40)/2 = 35, alpha (10+20)/2 = 15, planted (−20−10)/2 = −15
    const rows = [
      ...html.matchAll(/<tr><th scope="row">([^<]*)<\/th><td data-testid="heatmap-cell"/g),
    ].map((match) => match[1]);
    expect(rows).toEqual(["beta", "alpha", escapeHtml(PLANTED)]);
    const cell = (skill: string, config: string) =>
      new RegExp(
        `data-skill="${skill}" data-config="${config}"[^>]*><span class="delta">([^<]*)</span>(<span class="star")?`,
      ).exec(html);
    expect(cell("beta", "a")?.slice(1)).toEqual(["+30.0", '<span class="star"']);
    expect(cell("alpha", "b")?.slice(1)).toEqual(["+20.0", undefined]);
  });

  it("marks every verdict cell provisional in a report of an incomplete run, and none otherwise", () => {
    const incomplete = renderHtmlReport(
      { ...fixture(), completeness: { complete: false, stored: 3, planned: 40 } },
      { generatedAt: new Date("2026-01-02T03:04:05Z") },
    );
    expect(incomplete).toContain(
      "<strong>incomplete: 3 of 40 runs</strong> stored — every verdict on this page is provisional",
    );
    // The fixture's six profiles (three skills × two configurations): each heatmap cell, each
    // profile's class and the multiplicity table's classes say so beside the verdict itself.
    const cells = [
      ...incomplete.matchAll(/<td data-testid="heatmap-cell"[^>]*>([\s\S]*?)<\/td>/g),
    ].map((match) => match[1] ?? "");
    expect(cells).toHaveLength(6);
    for (const cell of cells)
      expect(cell).toMatch(
        /<span class="class">[^<]+<\/span> <span class="provisional"[^>]*>\(provisional\)<\/span>/,
      );
    const classes = [...incomplete.matchAll(/<dd data-testid="class">([\s\S]*?)<\/dd>/g)];
    expect(classes).toHaveLength(6);
    for (const entry of classes) expect(entry[1]).toContain("(provisional)");
    expect(html).not.toContain('data-testid="provisional"');
    expect(html).not.toContain('data-testid="incomplete"');
  });

  it("draws a scatter with the correlation when there are two configurations", () => {
    expect(html).toContain('id="scatter-chart-0"');
    expect(html).toContain("Pearson r = 0.97, Spearman ρ = 1.00 over 3 skills.");
    expect(html).not.toContain('data-testid="scatter-note"');
  });

  it("says so instead of a scatter when there is one configuration", () => {
    const single = fixture();
    const one: BenchReport = {
      ...single,
      profiles: single.profiles.filter((entry) => entry.config === "a"),
      configs: single.configs.slice(0, 1),
      correlations: [],
      signChanges: [],
    };
    const text = renderHtmlReport(one);
    expect(text).toContain('data-testid="scatter-note"');
    expect(text).not.toContain('id="scatter-chart-');
  });

  it("escapes run text in flags, reasons, evidence, verifier excerpts and infrastructure errors", () => {
    const report = buildReport(
      [
        runResult("c", "s", "q1", "without", 0, {
          flags: ["collection-error", PLANTED],
          verifier: verifierRecord(`E   ValueError: ${PLANTED}`, { evidence: [PLANTED] }),
        }),
        runResult("c", "s", "q1", "with", 0, { flags: ["collection-error"] }),
      ],
      {
        attempts: [
          {
            ...infraAttempt(
              { config: "c", skill: PLANTED, requirement: "q", arm: "with" },
              1,
              PLANTED,
            ),
            outcome: "infra_error",
          },
        ],
      },
    );
    // Planted in the flag id, its label, the reason, the evidence, the excerpt, the skill name and
    // the attempt's error: every one must arrive as text.
    expect(report.profiles.map((entry) => entry.unscorable)).toEqual([
      expect.stringContaining(PLANTED),
      expect.stringContaining(PLANTED),
    ]);
    const page = renderHtmlReport(report);
    expect(page).not.toContain(PLANTED);
    expect(page).toContain(`evidence: ${escapeHtml(PLANTED)}`);
    expect(page).toContain(`data-flag="${escapeHtml(PLANTED)}"`);
    expect(page).toContain(`ValueError: ${escapeHtml(PLANTED)}`);
  });

  it("says a run whose environment failed had no verifier run, not an empty exit code", () => {
    const report = buildReport(
      (["without", "with"] as const).map((arm) =>
        runResult("c", "s", "q1", arm, 0, {
          flags: ["environment-failure"],
          verifier: verifierRecord("pip failed", {
            exitCode: null,
            source: "setup",
            evidence: ["pip install failed"],
          }),
        }),
      ),
    );
    const page = renderHtmlReport(report);
    expect(page).not.toContain("exit none");
    expect(page).toContain("(verifier not run: the environment could not be prepared)");
  });

  it("formats deltas, ratios and p values", () => {
    expect(formatDelta(40)).toBe("+40.0");
    expect(formatDelta(-5)).toBe("\u22125.0");
    expect(formatDelta(0.01)).toBe("0.0");
    expect(formatDelta(null)).toBe("n/a");
    expect(formatRatio(0.725)).toBe("72.5%");
    expect(formatP(0.0078125)).toBe("0.0078");
    expect(formatP(0.0004)).toBe("<0.001");
  });
});
