/**
 * The README's screenshots: runs the quickstart evaluation (replayed patches, offline) into a
 * temporary folder, renders its HTML report with the pair views embedded, and photographs the
 * heatmap and one side-by-side trajectory view in headless Chromium with the network blocked.
 *
 *   node --import tsx scripts/screenshot-report.ts [--html <file>] [--chromium <path>]
 *
 * Writes docs/images/report-heatmap.png and docs/images/trajectory-viewer.png (1200 px wide);
 * `--html` also keeps the rendered report. Fails when a PNG exceeds the size budget, so the
 * repository does not silently grow.
 */
import { mkdir, mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { chromium } from "playwright-core";
import { runQuickstartEvaluation } from "../src/bench/run/quickstart.js";
import { loadPairViews, pairPath, renderHtmlReport } from "../src/report/index.js";

const WIDTH = 1200;
const MAX_BYTES = 300 * 1024;
/** The pair shown: a requirement the skill turns from 2 of 4 checks into 4 of 4. */
const PAIR = { config: "replay", skill: "money-decimal", requirement: "r01-line-total", repeat: 1 };

const repository = resolve(import.meta.dirname, "..");
const { values } = parseArgs({
  options: {
    html: { type: "string" },
    chromium: { type: "string", default: "/usr/bin/chromium" },
  },
});

const root = await mkdtemp(join(tmpdir(), "skillsmith-screenshots-"));
try {
  process.stderr.write("running the quickstart evaluation (replayed patches)…\n");
  const evaluation = await runQuickstartEvaluation({
    runDir: join(root, "run"),
    cacheDir: join(root, "cache"),
  });
  // The shown source is the quickstart's default run directory, not this temporary one.
  const html = renderHtmlReport(evaluation.report, {
    source: "runs/quickstart",
    pairs: loadPairViews(evaluation.runDir),
  });
  const htmlFile = values.html === undefined ? join(root, "report.html") : resolve(values.html);
  await writeFile(htmlFile, html);

  const images = join(repository, "docs", "images");
  await mkdir(images, { recursive: true });
  const browser = await chromium.launch({
    executablePath: values.chromium,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
  });
  try {
    const page = await browser.newPage({ viewport: { width: WIDTH, height: 900 } });
    await page.route("**/*", (route) =>
      route.request().url().startsWith("file:") ? route.continue() : route.abort(),
    );
    await page.goto(pathToFileURL(htmlFile).href);
    await page.waitForFunction(
      `[...document.querySelectorAll(".chart")].every((chart) => chart.getAttribute("data-rendered") === "true")`,
    );
    const heatmap = join(images, "report-heatmap.png");
    // The header, the heatmap and the first skill's requirement deltas.
    await page.screenshot({ path: heatmap, clip: { x: 0, y: 0, width: WIDTH, height: 1000 } });

    await page.setViewportSize({ width: WIDTH, height: 1100 });
    await page.goto(`${pathToFileURL(htmlFile).href}#pair/${pairPath(PAIR)}`);
    await page.waitForSelector('[data-testid="pair-viewer"] [data-testid="arm-with"]');
    const viewer = join(images, "trajectory-viewer.png");
    await page.screenshot({ path: viewer, clip: { x: 0, y: 0, width: WIDTH, height: 1100 } });

    for (const file of [heatmap, viewer]) {
      const { size } = await stat(file);
      process.stderr.write(`wrote ${file} (${Math.round(size / 1024)} KB)\n`);
      if (size > MAX_BYTES) {
        throw new Error(`${file} is ${size} bytes, over the ${MAX_BYTES}-byte budget`);
      }
    }
    if (values.html !== undefined) process.stderr.write(`wrote ${htmlFile}\n`);
  } finally {
    await browser.close();
  }
} finally {
  await rm(root, { recursive: true, force: true });
}
