/**
 * The HTML report of the quickstart run, opened from a file:// URL in real headless Chromium
 * (Debian's /usr/bin/chromium driven by playwright-core) with every non-file request aborted.
 *
 * Expected figures are the hand-computed quickstart values (see bench-run-quickstart.test.ts for
 * the derivation): money-decimal Δ = +40, p = 8/1024 ≈ 0.0078 < 0.05 → Golden (star);
 * iso-dates Δ = −5, p = 15/16 = 0.9375 → Ineffective (no star); pooled over 20 pairs
 * 58/80 = 72.5% → 72/80 = 90.0%, +17.5 points; identical pairs 7 of 20 = 35.0%.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BenchReport } from "../src/bench/analysis/report.js";
import { ResultsStore } from "../src/bench/store/results.js";
import { loadPairViews, type PairView, renderHtmlReport } from "../src/report/index.js";
import { CHROMIUM, hasChromium, launchOfflineChromium } from "./support/browser.js";
import { runInProcess } from "./support/cli.js";
import { quickstartRunCopy } from "./support/quickstart-run.js";

const MINUS = "\u2212";
/** Where screenshots are left for a person to look at (outside the removed temp folder). */
const SCREENSHOTS = join(import.meta.dirname, "..", "test-output", "screenshots");
const SCREENSHOT = join(SCREENSHOTS, "report-html.png");

let root: string;
let report: BenchReport;
let runDir: string;
let htmlFile: string;
let context: BrowserContext | undefined;
let page: Page;
const blocked: string[] = [];
const pageErrors: string[] = [];

async function openReport(file: string): Promise<void> {
  await page.goto(pathToFileURL(file).href);
  // Every chart container must hold a rendered Vega view (an svg) before content is asserted.
  // A string expression: the test's tsconfig has no DOM library for a typed callback.
  await page.waitForFunction(
    `(() => { const charts = [...document.querySelectorAll(".chart")]; return charts.length > 0 && charts.every((chart) => chart.getAttribute("data-rendered") !== null); })()`,
  );
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "report-html-"));
  // A copy of the quickstart evaluation this test run made once (test/support/quickstart-run.ts).
  const { evaluation } = await quickstartRunCopy(root);
  report = evaluation.report;
  runDir = evaluation.runDir;
  await mkdir(SCREENSHOTS, { recursive: true });
  htmlFile = join(root, "out", "report.html");
  const cli = await runInProcess(["bench", "report", evaluation.runDir, "--html", htmlFile]);
  expect(cli.stderr).toContain(htmlFile);
  expect(cli.code).toBe(0);
  if (hasChromium) {
    ({ context, page } = await launchOfflineChromium({
      profileDirectory: join(root, "profile"),
      allowed: (url) => url.protocol === "file:",
      blocked,
      pageErrors,
    }));
  }
  // The quickstart evaluation (40 scored runs in sandboxes) took over 180 s at load 25-30.
}, 900_000);

afterAll(async () => {
  await context?.close();
  await rm(root, { recursive: true, force: true });
});

describe("bench report --html", () => {
  it("writes a self-contained file with the chart libraries inlined and no remote scripts", async () => {
    const html = await readFile(htmlFile, "utf8");
    expect(html).toMatch(/<script data-library="vega">/);
    expect(html).toMatch(/<script data-library="vega-lite">/);
    expect(html).toMatch(/<script data-library="vega-embed">/);
    expect(html).not.toMatch(/<script[^>]+src=/);
    expect(html).not.toMatch(/<link[^>]+href=/);
  });

  it.skipIf(!hasChromium)(
    `renders the heatmap, tables and charts offline in ${CHROMIUM}`,
    async () => {
      await openReport(htmlFile);
      const states = await page
        .locator(".chart")
        .evaluateAll((charts) =>
          charts.map((chart) => [
            chart.id,
            chart.getAttribute("data-rendered"),
            chart.querySelector("svg, canvas") !== null,
          ]),
        );
      // heatmap + one requirement chart per profile (2) + usage; one configuration → no scatter
      expect(states).toEqual([
        ["heatmap-chart", "true", true],
        ["requirements-chart-0", "true", true],
        ["requirements-chart-1", "true", true],
        ["usage-chart", "true", true],
      ]);

      const golden = page.locator('td[data-testid="heatmap-cell"][data-skill="money-decimal"]');
      await expect(golden.textContent()).resolves.toMatch(/^\+40\.0★ Golden p 0\.0078$/);
      const ineffective = page.locator('td[data-testid="heatmap-cell"][data-skill="iso-dates"]');
      const ineffectiveText = await ineffective.textContent();
      expect(ineffectiveText).toContain(`${MINUS}5.0`);
      expect(ineffectiveText).toContain("Ineffective");
      expect(ineffectiveText).not.toContain("★");

      // Sorted by Δ: money-decimal (+40) above iso-dates (−5), in the table and in the chart.
      const rowHeads = await page.locator("#heatmap-table tbody th").allTextContents();
      expect(rowHeads).toEqual(["money-decimal", "iso-dates"]);
      const chartTexts = await page.locator("#heatmap-chart svg text").allTextContents();
      expect(chartTexts).toContain("+40.0★");
      expect(chartTexts).toContain(`${MINUS}5.0`);
      expect(chartTexts).toContain("Golden");
      expect(chartTexts).toContain("Ineffective");

      const pooled = page.locator('[data-testid="pooled-all"] .pooled-ratios');
      await expect(pooled.textContent()).resolves.toBe("72.5% → 90.0%");
      await expect(page.locator('[data-testid="identical-share"]').textContent()).resolves.toBe(
        "7 of 20 (35.0%)",
      );
      await expect(page.locator('[data-testid="scatter-note"]').textContent()).resolves.toContain(
        "one configuration",
      );
      const goldenProfile = page.locator(
        'section[data-testid="profile"][data-skill="money-decimal"]',
      );
      await expect(goldenProfile.locator("dl").textContent()).resolves.toContain("55.0% → 95.0%");

      await page.screenshot({ path: SCREENSHOT, fullPage: true });
      expect(blocked).toEqual([]);
      expect(pageErrors).toEqual([]);
    },
  );

  it.skipIf(!hasChromium)(
    `keeps a planted <script> in a skill name inert in ${CHROMIUM}`,
    async () => {
      const planted =
        '<script>window.__planted = 1</script><img src=x onerror="window.__planted = 2">';
      const source = report.profiles.find((profile) => profile.skill === "money-decimal");
      if (source === undefined) throw new Error("no money-decimal profile");
      const hostile: BenchReport = {
        ...report,
        profiles: [...report.profiles, { ...source, skill: planted, notes: [planted] }],
      };
      const file = join(root, "out", "hostile.html");
      await writeFile(file, renderHtmlReport(hostile));
      await openReport(file);
      const rendered = await page.evaluate("typeof window.__planted");
      expect(rendered).toBe("undefined");
      const heads = await page.locator("#heatmap-table tbody th").allTextContents();
      expect(heads).toContain(planted);
      await expect(page.locator("img").count()).resolves.toBe(0);
      expect(blocked).toEqual([]);
    },
  );
  it.skipIf(!hasChromium)(
    `renders the Δ scatter when there are two configurations in ${CHROMIUM}`,
    async () => {
      const copy = "replay-copy";
      const twoConfigs: BenchReport = {
        ...report,
        profiles: [
          ...report.profiles,
          ...report.profiles.map((profile) => ({ ...profile, config: copy })),
        ],
        configs: [
          ...report.configs,
          ...report.configs.map((config) => ({ ...config, config: copy })),
        ],
      };
      const file = join(root, "out", "two-configs.html");
      await writeFile(file, renderHtmlReport(twoConfigs));
      await openReport(file);
      const scatter = page.locator("#scatter-chart-0");
      await expect(scatter.getAttribute("data-rendered")).resolves.toBe("true");
      // Two skills plotted: one Vega point symbol each.
      await expect(
        scatter.locator("svg path.mark-symbol, svg g.mark-symbol path").count(),
      ).resolves.toBe(2);
      // Two skills are too few for a correlation (the analysis needs at least 3).
      await expect(page.locator("#scatter").textContent()).resolves.toContain(
        "Too few shared skills",
      );
      const heads = await page.locator("#heatmap-table thead th").allTextContents();
      expect(heads).toEqual(["skill", "replay", copy]);
      expect(blocked).toEqual([]);
      expect(pageErrors).toEqual([]);
    },
  );

  it.skipIf(!hasChromium)(
    `links every pair to the side-by-side trajectory viewer embedded in the file, offline, in ${CHROMIUM}`,
    async () => {
      const store = ResultsStore.openReadOnly(runDir);
      const runs = store.results();
      store.close();
      const stored = (arm: string) =>
        runs.find(
          (run) =>
            run.skill === "iso-dates" && run.requirement === "d01-due-date" && run.arm === arm,
        );
      await openReport(htmlFile);
      // 2 skills × 10 requirements × 1 repeat: one link per pair.
      await expect(page.locator('[data-testid="pair-link"]').count()).resolves.toBe(20);
      const link = page.locator(
        '[data-testid="pair-link"][data-pair="replay/iso-dates/d01-due-date/1"]',
      );
      await expect(link.getAttribute("href")).resolves.toBe(
        "#pair/replay/iso-dates/d01-due-date/1",
      );
      await link.click();
      const viewer = page.locator('[data-testid="pair-viewer"]');
      await viewer.waitFor();
      expect(new URL(page.url()).protocol).toBe("file:");
      await expect(page.locator("main").isVisible()).resolves.toBe(false);
      for (const arm of ["without", "with"] as const) {
        const run = stored(arm);
        if (run === undefined) throw new Error(`no stored ${arm} run`);
        const column = viewer.locator(`[data-testid="arm-${arm}"]`);
        await expect(column.isVisible()).resolves.toBe(true);
        await expect(column.locator('[data-testid="check"] th').allTextContents()).resolves.toEqual(
          run.checks.map((check) => check.name),
        );
        await expect(
          column.locator('[data-testid="check"] td.result').allTextContents(),
        ).resolves.toEqual(
          run.checks.map((check) => (check.status === "pass" ? "✔ pass" : "✘ FAIL")),
        );
        await expect(
          column.locator('[data-testid="event"][data-type="tool_call"]').textContent(),
        ).resolves.toContain("apply_patch");
      }
      await page.screenshot({ path: join(SCREENSHOTS, "report-html-pair.png"), fullPage: true });
      await viewer.locator('[data-testid="back"]').click();
      await expect(page.locator("main").isVisible()).resolves.toBe(true);
      await expect(viewer.isVisible()).resolves.toBe(false);
      expect(blocked).toEqual([]);
      expect(pageErrors).toEqual([]);
    },
  );

  it.skipIf(!hasChromium)(
    `keeps planted text in an embedded pair inert in ${CHROMIUM}`,
    async () => {
      const planted =
        '</script><script>window.__planted = 3</script><img src=x onerror="window.__planted = 4">';
      const pairs = loadPairViews(runDir);
      const first = pairs[0] as PairView;
      const without = first.without;
      if (without === undefined) throw new Error("no without arm");
      const hostile: PairView = {
        ...first,
        without: {
          ...without,
          events: [{ type: "assistant_text", text: planted }],
          checks: [{ name: planted, status: "fail", message: planted }],
        },
      };
      const file = join(root, "out", "hostile-pair.html");
      await writeFile(file, renderHtmlReport(report, { pairs: [hostile, ...pairs.slice(1)] }));
      await page.goto(`${pathToFileURL(file).href}#pair/${first.id}`);
      const column = page.locator('[data-testid="arm-without"]');
      await column.waitFor();
      await expect(column.locator('[data-testid="event"] pre').textContent()).resolves.toBe(
        planted,
      );
      await expect(column.locator('[data-testid="check"] th').textContent()).resolves.toBe(planted);
      expect(await page.evaluate("typeof window.__planted")).toBe("undefined");
      await expect(page.locator("img").count()).resolves.toBe(0);
      expect(blocked).toEqual([]);
    },
  );
});
