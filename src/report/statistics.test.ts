import { describe, expect, it } from "vitest";
import { runResult } from "../../test/support/results.js";
import type { Profile } from "../bench/analysis/report.js";
import { buildReport } from "../bench/analysis/report.js";
import type { RunResult } from "../bench/store/results.js";
import { formatProfileP } from "./format.js";
import { renderHtmlReport } from "./html.js";
import { profilePText } from "./statistics.js";

const PLANTED = '<img src=x onerror="alert(1)">';

/** Requirement k of `skill` gets `deltas[k]` points: +25 (0.5 → 0.75) or 0 (0.5 → 0.5). */
function runs(
  skill: string,
  deltas: readonly number[],
  extra: Partial<RunResult> = {},
): RunResult[] {
  return deltas.flatMap((delta, index) => [
    runResult("c", skill, `r${index + 1}`, "without", 0.5, extra),
    runResult("c", skill, `r${index + 1}`, "with", delta > 0 ? 0.75 : 0.5, extra),
  ]);
}

describe("the statistics across skills in the HTML report", () => {
  // Seven of +25: p = 2/128 = 0.015625; six of +25 and one zero: p = 2/64 = 0.03125; and a skill
  // whose name carries markup, with nothing different (p = 1). BH over m = 3:
  // q = 3·0.015625/1 = 0.046875, 3·0.03125/2 = 0.046875 (the running minimum), 1.
  const report = buildReport(
    [
      ...runs("strong", [25, 25, 25, 25, 25, 25, 25]),
      ...runs("weaker", [25, 25, 25, 25, 25, 25, 0]),
      ...runs(PLANTED, [0, 0, 0, 0, 0, 0, 0]),
    ],
    { powerDraws: 200 },
  );
  const html = renderHtmlReport(report, { generatedAt: new Date("2026-01-01T00:00:00Z") });

  it("lists every tested profile with p, q and both classes, and what chance alone gives", () => {
    const rows = [...html.matchAll(/<tr data-testid="multiplicity-row"[^>]*>(.*?)<\/tr>/g)].map(
      (match) =>
        (match[1] ?? "")
          .replace(/<[^>]+>/g, " ")
          .replace(/\s+/g, " ")
          .trim(),
    );
    expect(rows).toEqual([
      "c &lt;img src=x onerror=&quot;alert(1)&quot;&gt; 1.0000 Ineffective 1.0000 Ineffective",
      "c strong 0.0156 Golden 0.0469 Golden",
      "c weaker 0.0313 Golden 0.0469 Golden",
    ]);
    // Sizes: m′ = 7 → 2/128; m′ = 6 → 2/64; no non-zero delta → 0. Sum 0.046875 ≈ 0.05.
    expect(html).toContain("<strong>0.05</strong> profiles would be expected to reach p &lt; 0.05");
    expect(html).toContain("at most m·α = 0.15");
    expect(html).not.toContain(PLANTED);
  });

  it("shows q, the FDR class and what each test could detect in the skill's section", () => {
    const section = html.slice(html.indexOf('data-skill="weaker"', html.indexOf('id="profiles"')));
    expect(section).toMatch(/<dd data-testid="q-value">0\.0469<\/dd>/);
    expect(section).toMatch(/<dd data-testid="class-fdr">Golden<\/dd>/);
    const zeros = html.slice(html.indexOf('data-testid="detectable"', html.indexOf("onerror")));
    expect(zeros).toContain(
      "only 0 of 7 deltas are non-zero, so the smallest attainable p is 1.0000 ≥ α",
    );
    expect(html).toContain('<section id="design">');
  });

  it("defines Ineffective, and shows constant deltas as no interval rather than a zero-width one", () => {
    expect(html).toContain(
      "Ineffective = no effect detected at α with these requirements (not evidence of no effect)",
    );
    // "strong" has seven deltas of +25, the planted skill seven zeros: both constant.
    expect(html).toContain('data-testid="detectable">no interval: every delta equals 25');
    expect(html).toContain('data-testid="detectable">no interval: every delta equals 0');
    expect(html).not.toMatch(/below \+?0\.0 or above \+?0\.0/);
  });

  it("says a dp-bounds p is a bound wherever it is shown", () => {
    const bounded = {
      p: 0.0516,
      pMethod: { method: "dp-bounds" as const, error: 0.006, pLower: 0.0455 },
    };
    expect(formatProfileP(bounded)).toBe("≤ 0.052");
    expect(profilePText(bounded as unknown as Profile)).toMatch(/^≤ 0\.0516.*\(bound\)/);
    expect(formatProfileP({ p: 0.0516, pMethod: { method: "dp" } })).toBe("0.052");
  });
});
