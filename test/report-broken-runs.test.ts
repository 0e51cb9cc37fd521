/**
 * Reports never hide a broken run, end to end: a real `runSuite` run (real git repository, real
 * pytest verifiers, bubblewrap when it works here, else the unsafe pass-through), then the real
 * CLI's `bench report` text, `--json` and `--html`, the HTML opened from a file:// URL and the
 * live dashboard over real HTTP, both in real headless Chromium with every other request aborted.
 *
 * The suite (configuration `replay`), and what each part must score, worked out by hand:
 * - skill `working`, verifier checks `out/wK.txt` exists and says good (2 checks). Replayed
 *   patches: the with arm writes good everywhere, the without arm writes bad for w1 and w2, good
 *   for w3. So w1, w2: 0.5 → 1 (d = +50); w3: 1 → 1 (d = 0). w4's verifier sleeps past its 2 s
 *   limit in both arms: a verifier timeout, scored 0 in both (d = 0), a measured timeout pair.
 *   w5's verifier imports a helper module that does not exist: a collection error in both arms,
 *   left out. Measured deltas 50, 50, 0, 0: Δ = 25; the sign-flip p counts the 16 sign
 *   assignments with |sum| ≥ 100, i.e. both fifties of one sign (2 × 4 for the zeros' signs):
 *   8/16 = 0.5 ⇒ Ineffective. Pass ratios over the 4 measured pairs: (0.5+0.5+1+0)/4 = 50% →
 *   (1+1+1+0)/4 = 75%. With w5 counted it would have been n = 5 and Δ = 20.
 * - skill `helperless`: its one verifier imports the missing helper too ⇒ nothing measurable ⇒
 *   unscorable (the old report said "Ineffective, p 1.0000"). Its command first echoes a line of
 *   markup, which must stay inert wherever the output is shown.
 * - skill `unreachable`: the harness throws for it ("spawn claude ENOENT"), 2 attempts per arm ⇒
 *   no result at all ⇒ unscorable with that error (the old report left it out of the table).
 * Pairs: 4 measured of 7 (w1–w4; not w5, h1, u1). Verifier timeouts: 2 runs, 1 measured pair
 * (the old HTML said "Timeouts: 0"). Collection errors: 4 runs (w5 and h1, both arms).
 */
import { mkdir, mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentHarnessV1 } from "../src/agents/types.js";
import type { BenchReport } from "../src/bench/analysis/report.js";
import type { RunSuiteSummary } from "../src/bench/run/options.js";
import { runSuite } from "../src/bench/run/runner.js";
import { type Dashboard, startDashboard } from "../src/report/index.js";
import { CHROMIUM, hasChromium, launchOfflineChromium } from "./support/browser.js";
import { runInProcess, writeTree } from "./support/cli.js";
import { usableBubblewrap } from "./support/sandboxes.js";
import { newFilePatch, removeRunRoot, TINY_MOUNT, tinyRepository } from "./support/suites.js";

const SCREENSHOTS = join(import.meta.dirname, "..", "test-output", "screenshots");
const MISSING_HELPER = "ModuleNotFoundError: No module named '_dependency_utils'";
const PLANTED = `RuntimeError: <img src=x onerror="window.__planted = 1"> planted by the verifier`;
const HARNESS_ERROR = "spawn claude ENOENT";
const PYTEST = "PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 /usr/bin/python3 -m pytest -q -p no:cacheprovider";

let root: string;
let runDir: string;
let summary: RunSuiteSummary;
let context: BrowserContext | undefined;
let page: Page;
let dashboard: Dashboard | undefined;
const blocked: string[] = [];
const pageErrors: string[] = [];

function requirementMarkdown(id: string): string {
  return `## Background\n\nA tiny repository.\n\n## Requirement\n\nWrite the word good into out/${id}.txt.\n\n## File Operations\n\n- \`out/${id}.txt\`\n\n## Acceptance Criteria\n\n- out/${id}.txt exists\n- it says good\n`;
}

/** A pytest verifier of `out/<id>.txt`; `prelude` goes at the top of the module. */
function checkFile(id: string, prelude = ""): string {
  return `${prelude}import os
import pathlib

ROOT = pathlib.Path(os.environ.get("SKILLSMITH_WORKSPACE", "${TINY_MOUNT}"))


def test_exists():
    """The file is there."""
    assert (ROOT / "out/${id}.txt").exists()


def test_good():
    """It says good."""
    assert (ROOT / "out/${id}.txt").read_text().strip() == "good"
`;
}

function verifierYaml(timeoutSeconds: number, before = ""): string {
  return `command: ${JSON.stringify(`${before}${PYTEST} test_feature.py --junitxml=junit.xml`)}\nfiles: [test_feature.py]\njunit: junit.xml\ntimeoutSeconds: ${timeoutSeconds}\n`;
}

async function writeSuite(): Promise<{ suite: string; predictions: string }> {
  const { repo, commit } = await tinyRepository(root);
  const suite = join(root, "suite");
  const files: Record<string, string> = {
    "suite.yaml":
      "format: skillsmith-suite/1\nname: broken-runs\nconfigurations:\n  - id: replay\n    agent: replay\n    limits: { timeoutSeconds: 60 }\n",
  };
  const skill = (id: string, requirements: Record<string, { test: string; yaml: string }>) => {
    files[`skills/${id}/skill.yaml`] =
      `repository:\n  path: ${repo}\n  commit: ${commit}\n  name: tiny\n  mountPath: ${TINY_MOUNT}\n`;
    files[`skills/${id}/agent-skills/${id}/SKILL.md`] =
      `---\nname: ${id}\ndescription: Write the word good into result files. Use when a task asks for one.\n---\n\n# ${id}\n\nWrite \`good\`.\n`;
    for (const [requirement, verifier] of Object.entries(requirements)) {
      const folder = `skills/${id}/requirements/${requirement}`;
      files[`${folder}/requirement.md`] = requirementMarkdown(requirement);
      files[`${folder}/verifier.yaml`] = verifier.yaml;
      files[`${folder}/verifier/test_feature.py`] = verifier.test;
    }
  };
  const helperImport = "from _dependency_utils import load  # the helper the import dropped\n";
  skill("working", {
    w1: { test: checkFile("w1"), yaml: verifierYaml(30) },
    w2: { test: checkFile("w2"), yaml: verifierYaml(30) },
    w3: { test: checkFile("w3"), yaml: verifierYaml(30) },
    w4: { test: checkFile("w4", "import time\ntime.sleep(60)\n"), yaml: verifierYaml(2) },
    w5: { test: checkFile("w5", helperImport), yaml: verifierYaml(30) },
  });
  skill("helperless", {
    h1: {
      test: checkFile("h1", helperImport),
      yaml: verifierYaml(30, `echo '${PLANTED.replaceAll("'", "'\\''")}'; `),
    },
  });
  skill("unreachable", { u1: { test: checkFile("u1"), yaml: verifierYaml(30) } });
  await writeTree(suite, files);

  const lines: string[] = [];
  for (const [skillId, ids] of [
    ["working", ["w1", "w2", "w3", "w4", "w5"]],
    ["helperless", ["h1"]],
  ] as const) {
    for (const id of ids) {
      for (const arm of ["without", "with"] as const) {
        const good = arm === "with" || id === "w3" || id === "w4" || id === "w5" || id === "h1";
        lines.push(
          JSON.stringify({
            skill: skillId,
            requirement: id,
            arm,
            patch: newFilePatch(`out/${id}.txt`, good ? "good" : "bad"),
          }),
        );
      }
    }
  }
  const predictions = join(root, "predictions.jsonl");
  await writeFile(predictions, `${lines.join("\n")}\n`);
  return { suite, predictions };
}

async function waitForCharts(): Promise<void> {
  // A string expression: the test's tsconfig has no DOM library for a typed callback.
  await page.waitForFunction(
    `(() => { const charts = [...document.querySelectorAll(".chart")]; return charts.length > 0 && charts.every((chart) => chart.getAttribute("data-rendered") !== null); })()`,
  );
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "report-broken-runs-"));
  runDir = join(root, "run");
  const { suite, predictions } = await writeSuite();
  const bubblewrap = await usableBubblewrap();
  summary = await runSuite({
    suite,
    runDir,
    predictions,
    sandbox: bubblewrap ?? "unsafe",
    cacheDir: join(root, "cache"),
    concurrency: 2,
    maxAttempts: 2,
    // Runs through broken verifiers are what this report test is about; with the check (the
    // default) they would be stored flagged broken-verifier without running.
    check: false,
    harnessFor: (_configuration, defaults): AgentHarnessV1 => {
      const inner = defaults();
      return {
        specificationVersion: "v1",
        name: "replay-unless-unreachable",
        run: async (request) => {
          if (request.taskId?.startsWith("unreachable/") === true) throw new Error(HARNESS_ERROR);
          return inner.run(request);
        },
      };
    },
  });
  await mkdir(SCREENSHOTS, { recursive: true });
  if (hasChromium) {
    ({ context, page } = await launchOfflineChromium({
      profileDirectory: join(root, "profile"),
      allowed: (url) =>
        url.protocol === "file:" ||
        (dashboard !== undefined && url.origin === new URL(dashboard.url).origin),
      blocked,
      pageErrors,
    }));
  }
  // An evaluation in sandboxes and a browser: sized like the quickstart's, for a loaded machine.
}, 900_000);

afterAll(async () => {
  await context?.close();
  await dashboard?.close();
  await removeRunRoot(root);
});

describe(`a run with broken verifiers and a skill lost to infrastructure`, () => {
  it("scored what could run and gave the unreachable skill up after its attempts", () => {
    // 6 working/helperless requirements × 2 arms scored; u1's two keys failed twice each.
    expect(summary.executed).toBe(12);
    expect(
      summary.failed.map((failure) => `${failure.key.skill}/${failure.key.arm}`).sort(),
    ).toEqual(["unreachable/with", "unreachable/without"]);
  });

  it("bench report --json: unscorable skills with reasons, measurable pairs only, flags per run", async () => {
    const cli = await runInProcess(["bench", "report", runDir, "--json"]);
    expect(cli.code).toBe(0);
    const report = JSON.parse(cli.stdout) as BenchReport;
    expect(report.format).toBe("skillsmith-report/1");
    const profile = (skill: string) => report.profiles.find((entry) => entry.skill === skill);

    const working = profile("working");
    expect(working?.n).toBe(4);
    expect(working?.requirements.map((outcome) => outcome.delta)).toEqual([50, 50, 0, 0, null]);
    expect(working?.delta).toBeCloseTo(25, 10);
    expect(working?.p).toBeCloseTo(0.5, 12);
    expect(working?.class).toBe("ineffective");
    expect(working?.without).toBeCloseTo(0.5, 12);
    expect(working?.with).toBeCloseTo(0.75, 12);
    expect(working?.measured).toMatchObject({ total: 5, measurable: 4 });
    const w5 = working?.requirements[4];
    expect(w5?.measurement).toMatchObject({
      measurable: false,
      reason: "verifier failed in both arms (collection error)",
    });
    expect(w5?.detail.with[0]?.flags).toEqual(["collection-error"]);
    expect(w5?.detail.with[0]?.verifier?.output).toContain(MISSING_HELPER);
    expect(w5?.detail.with[0]?.excerpt.join("\n")).toContain(MISSING_HELPER);
    const w4 = working?.requirements[3];
    expect(w4?.timeout).toBe(true);
    expect(w4?.detail.without[0]?.flags).toEqual(["timeout"]);

    expect(profile("helperless")).toMatchObject({
      class: null,
      p: null,
      unscorable: "nothing measurable: verifier failed in both arms (collection error)",
    });
    const unreachable = profile("unreachable");
    expect(unreachable?.class).toBeNull();
    expect(unreachable?.unscorable).toContain("every attempt failed for infrastructure");
    expect(unreachable?.unscorable).toContain(HARNESS_ERROR);
    expect(report.unscorable.map((item) => item.skill).sort()).toEqual([
      "helperless",
      "unreachable",
    ]);
    expect(report.measurement).toMatchObject({ pairs: 7, measurable: 4 });
    expect(report.pairs.timeouts).toBe(1);
    const counts = Object.fromEntries(report.flagCounts.map((count) => [count.flag, count.runs]));
    expect(counts).toEqual({ timeout: 2, "collection-error": 4 });
    expect(report.runs).toEqual({ scored: 12, infraAttempts: 4 });
    expect(report.measurement.lostRuns).toBe(2);
  });

  it("bench report: the text names every flag, the telling line and what was left out", async () => {
    const cli = await runInProcess(["bench", "report", runDir]);
    expect(cli.code).toBe(0);
    const text = cli.stdout;
    expect(text).toMatch(/replay\s+helperless\s+0\s+-\s+-\s+-\s+-\s+unscorable/);
    expect(text).toMatch(/replay\s+unreachable\s+0\s+-\s+-\s+-\s+-\s+unscorable/);
    expect(text).toMatch(
      /replay\s+working\s+4\s+50\.0%\s+75\.0%\s+\+25\.0\s+0\.5000\s+Ineffective/,
    );
    expect(text).not.toMatch(/helperless\s.*Ineffective/);
    expect(text).toContain("verdicts use measurable pairs only: 4 of 7 pairs measured");
    expect(text).toContain("replay / working: measured 4 of 5 requirements;");
    expect(text).toContain(
      "  w5: flags: collection error; not measured: verifier failed in both arms (collection error)",
    );
    expect(text).toContain(`      | E   ${MISSING_HELPER}`);
    expect(text).toContain("measured pairs with a timeout (agent or verifier): 1");
    expect(text).toContain(
      `lost to infrastructure after 2 attempts: agent harness failed: ${HARNESS_ERROR}`,
    );
  });

  it.skipIf(!hasChromium)(
    `the HTML report shows flags, counts, unscorable skills and the verifier output, inert, in ${CHROMIUM}`,
    async () => {
      const file = join(root, "report.html");
      const cli = await runInProcess(["bench", "report", runDir, "--html", file]);
      expect(cli.code).toBe(0);
      expect(await readFile(file, "utf8")).not.toContain(PLANTED);
      await page.goto(pathToFileURL(file).href);
      await waitForCharts();

      const cell = page.locator(
        'td[data-testid="heatmap-cell"][data-skill="helperless"][data-unscorable="true"]',
      );
      await expect(cell.textContent()).resolves.toContain("Unscorable");
      await expect(cell.textContent()).resolves.toContain("collection error");
      await expect(
        page.locator('[data-testid="unscorable-skill"]').allTextContents(),
      ).resolves.toEqual([
        "helperless under replay: nothing measurable: verifier failed in both arms (collection error)",
        expect.stringContaining(HARNESS_ERROR),
      ]);
      await expect(page.locator('[data-testid="measurable-pairs"]').textContent()).resolves.toBe(
        "4 of 7 pairs",
      );
      await expect(page.locator('[data-testid="timeouts"]').textContent()).resolves.toBe("1");
      const counts = page.locator('[data-testid="flag-counts"] [data-testid="flag-count"]');
      await expect(
        counts.evaluateAll((rows) =>
          rows.map((row) => [
            row.getAttribute("data-flag"),
            row.querySelector(".runs")?.textContent,
            row.querySelector(".requirements")?.textContent,
          ]),
        ),
      ).resolves.toEqual([
        ["timeout", "2", "1"],
        ["collection-error", "4", "2"],
      ]);

      const working = page.locator('section[data-testid="profile"][data-skill="working"]');
      await expect(working.locator('[data-testid="measured"]').textContent()).resolves.toBe(
        "4 of 5 requirements",
      );
      const w5 = working.locator('tr[data-testid="requirement-row"][data-requirement="w5"]');
      await expect(w5.getAttribute("data-measurable")).resolves.toBe("false");
      await expect(w5.locator(".delta").textContent()).resolves.toBe("not measured");
      await expect(
        w5.locator('[data-testid="flag"]').first().getAttribute("data-flag"),
      ).resolves.toBe("collection-error");
      await w5.locator('[data-testid="run-flags"] summary').first().click();
      await expect(
        w5.locator('[data-testid="verifier-excerpt"]').first().textContent(),
      ).resolves.toContain(MISSING_HELPER);
      const helperless = page.locator('section[data-testid="profile"][data-skill="helperless"]');
      await helperless.locator('[data-testid="run-flags"] summary').first().click();
      // The planted markup is shown as text in the excerpt, never run.
      await expect(
        helperless.locator('[data-testid="verifier-excerpt"]').first().textContent(),
      ).resolves.toContain(PLANTED);
      await page.screenshot({ path: join(SCREENSHOTS, "report-broken-runs.png"), fullPage: true });

      await page.goto(`${pathToFileURL(file).href}#pair/replay/helperless/h1/1`);
      const column = page.locator('[data-testid="pair-viewer"] [data-testid="arm-with"]');
      await column.waitFor();
      await expect(
        column.locator('[data-testid="flag-detail"]').getAttribute("data-flag"),
      ).resolves.toBe("collection-error");
      const output = await column.locator('[data-testid="verifier-output"]').textContent();
      expect(output).toContain(MISSING_HELPER);
      expect(output).toContain(PLANTED);
      expect(await page.evaluate("typeof window.__planted")).toBe("undefined");
      await expect(page.locator("img").count()).resolves.toBe(0);
      expect(blocked).toEqual([]);
      expect(pageErrors).toEqual([]);
    },
  );

  it.skipIf(!hasChromium)(`the live dashboard shows the same, in ${CHROMIUM}`, async () => {
    dashboard = await startDashboard({ runDir });
    await page.goto(dashboard.url);
    await waitForCharts();
    await expect(page.locator('[data-testid="timeouts"]').textContent()).resolves.toBe("1");
    await expect(page.locator('[data-testid="unscorable-skill"]').count()).resolves.toBe(2);
    await page.goto(`${dashboard.url}pair/replay/working/w5/1`);
    const output = page.locator('[data-testid="arm-without"] [data-testid="verifier-output"]');
    await output.waitFor();
    await expect(output.textContent()).resolves.toContain(MISSING_HELPER);
    expect(await page.evaluate("typeof window.__planted")).toBe("undefined");
    expect(blocked).toEqual([]);
    expect(pageErrors).toEqual([]);
  });
});
