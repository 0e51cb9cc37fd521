/**
 * Arms beyond with/without, on a tiny replay suite (real git repository, real verifier
 * processes): a skill variant compared with every other arm (Δ and the exact sign-flip p
 * computed here by enumerating sign flips by hand), baseline reuse from an earlier run directory
 * with the attacks that must defeat it (changed verifier, limit, base, recorded agent output,
 * --fresh-baseline), and `bench regrade` with a verifier changed between run and regrade.
 */
import { existsSync } from "node:fs";
import { appendFile, cp, mkdir, mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reportRunDir } from "../src/bench/analysis/load.js";
import { regradeRunDir } from "../src/bench/run/regrade.js";
import { runSuite } from "../src/bench/run/runner.js";
import { ResultsStore } from "../src/bench/store/results.js";
import { runInProcess } from "./support/cli.js";
import { git } from "./support/git.js";
import { signFlipByHand } from "./support/signflip.js";
import { newFilePatch, removeRunRoot, writeReplaySuite } from "./support/suites.js";

const REQUIREMENTS = 4;
let root: string;
let suite: string;
let predictions: string;
let cacheDir: string;
let variantFolder: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "bench-arms-"));
  cacheDir = join(root, "cache");
  ({ suite, predictions } = await writeReplaySuite(root, {
    requirements: REQUIREMENTS,
    verifierSleepSeconds: 0,
  }));
  // The variant v2 writes good for r1 and r2, bad for r3, nothing for r4.
  const variantLines = [
    { requirement: "r1", text: "good" },
    { requirement: "r2", text: "good" },
    { requirement: "r3", text: "bad" },
  ].map(({ requirement, text }) =>
    JSON.stringify({
      skill: "alpha",
      requirement,
      arm: "variant:v2",
      patch: newFilePatch(`out/${requirement}.txt`, text),
    }),
  );
  await appendFile(predictions, `${variantLines.join("\n")}\n`);
  variantFolder = join(root, "alpha-v2");
  await mkdir(variantFolder);
  await writeFile(
    join(variantFolder, "SKILL.md"),
    "---\nname: alpha-v2\ndescription: A second version of alpha. Use when a task asks for a result file.\n---\n\n# Alpha v2\n\nWrite `good`, mostly.\n",
  );
});

afterAll(async () => {
  await removeRunRoot(root);
});

let plainRunMade: Promise<string> | undefined;

/**
 * The suite run once as it is (both arms, every requirement), made the first time a test asks.
 * Baseline reuse reuses it and `bench regrade` re-scores it; neither writes into it (the regrade
 * test checks that its results are unchanged), so one run serves both instead of two identical
 * runs.
 */
function plainRun(): Promise<string> {
  plainRunMade ??= (async () => {
    const runDir = join(root, "run-plain");
    await runSuite({ suite, runDir, predictions, sandbox: "unsafe", cacheDir });
    return runDir;
  })();
  return plainRunMade;
}

function runDirResults(runDir: string) {
  const store = ResultsStore.openReadOnly(runDir);
  try {
    return store.results();
  } finally {
    store.close();
  }
}

describe("skill variants", () => {
  it("compares every pair of arms with Δ and the exact sign-flip p (CLI, text and JSON)", async () => {
    const out = join(root, "run-variants");
    const env = { ...process.env, SKILLSMITH_CACHE_DIR: cacheDir };
    const cli = await runInProcess(
      [
        "bench",
        "run",
        suite,
        "--predictions",
        predictions,
        "--variant",
        `v2=${variantFolder}`,
        "--out",
        out,
        "--sandbox",
        "unsafe",
        "--json",
      ],
      { env },
    );
    expect(cli.stderr).not.toContain("failed after");
    expect(cli.code).toBe(0);
    const { report } = JSON.parse(cli.stdout) as {
      report: {
        arms: Array<{ arms: Array<{ label: string }>; pairs: Array<Record<string, unknown>> }>;
      };
    };
    // Scores by hand (two checks: exists, says good): none = 1, .5, 1, .5; skill = 1, 1, 1, 1;
    // v2 = 1, 1, .5, 0 (r4 has no file).
    const expected: Record<string, number[]> = {
      "skill vs none": [0, 50, 0, 50],
      "v2 vs none": [0, 50, -50, -50],
      "v2 vs skill": [0, 0, -50, -100],
    };
    const matrix = report.arms[0];
    expect(matrix?.arms.map((arm) => arm.label)).toEqual(["none", "skill", "v2"]);
    const pValues: number[] = [];
    for (const [label, deltas] of Object.entries(expected)) {
      const pair = matrix?.pairs.find((item) => item.label === label);
      expect(((pair?.deltas ?? []) as Array<{ delta: number }>).map((item) => item.delta)).toEqual(
        deltas,
      );
      expect(pair?.delta).toBeCloseTo(deltas.reduce((sum, value) => sum + value, 0) / 4, 10);
      const p = signFlipByHand(deltas);
      pValues.push(p);
      expect(pair?.p).toBeCloseTo(p, 10);
      expect(pair?.class).toBe("ineffective");
    }
    // By hand: skill vs none flips to |Σ| ≥ 100 in 8 of 16 (p = .5); v2 vs none has Σ = -50,
    // reached by every flip (p = 1); v2 vs skill |Σ| ≥ 150 in 8 of 16 (p = .5). BH over the
    // three: sorted .5, .5, 1 → q = min(1·3/3) = 1 for the largest, min(1, .5·3/2) = .75 for
    // the other two.
    expect(pValues).toEqual([0.5, 1, 0.5]);
    expect(matrix?.pairs.map((pair) => pair.q)).toEqual([0.75, 1, 0.75]);

    const text = await runInProcess(["bench", "report", out]);
    expect(text.stdout).toContain("arms of replay / alpha");
    expect(text.stdout).toMatch(/v2 vs skill\s+4\/4\s+-37\.5/);
    const htmlFile = join(root, "variants.html");
    const html = await runInProcess(["bench", "report", out, "--html", htmlFile]);
    expect(html.code).toBe(0);
    const page = await readFile(htmlFile, "utf8");
    expect(page).toContain('data-testid="arm-matrix"');
    // Row v2, column skill: skill − v2 = +37.5 points; row skill, column v2: −37.5.
    expect(page).toMatch(/data-row="variant:v2" data-column="with">\+37\.5/);
    expect(page).toMatch(/data-row="with" data-column="variant:v2">\u221237\.5/);

    // Variant arms given on the command line (not in the suite) are re-graded too. `bench run`
    // prepared its base in the cache its command's environment names, and a base's digest
    // depends on where it was prepared, so the regrade uses that cache too.
    const variants = await regradeRunDir({
      runDir: out,
      outDir: join(root, "run-variants-regraded"),
      sandbox: "unsafe",
      cacheDir,
    });
    expect(variants.runs.filter((run) => !run.rescored)).toEqual([]);
    expect(variants.rescored).toBe(3 * REQUIREMENTS);
  });
});

describe("variants through the library", () => {
  // The CLI parses --variant and refuses bad names; a library caller (or anything building
  // VariantOption values) reaches runSuite without that parser. A name that is a reserved arm or
  // a path would make one arm mean two things or name files outside the run directory.
  it.each(["with", "../../escape", "none", ""])(
    "refuses the variant name %j before any run is stored",
    async (name) => {
      const out = join(root, `run-bad-variant-${Buffer.from(name).toString("hex")}`);
      await expect(
        runSuite({
          suite,
          runDir: out,
          predictions,
          sandbox: "unsafe",
          cacheDir,
          check: false,
          variants: [{ name, folder: variantFolder }],
        }),
      ).rejects.toMatchObject({ code: "bench.variant-invalid" });
      expect(existsSync(join(out, "results.sqlite"))).toBe(false);
    },
  );
});

describe("baseline reuse", () => {
  let first: string;
  beforeAll(async () => {
    first = await plainRun();
  });

  /** A copy of the suite (and predictions) changed by `change`, run with --reuse of the first run. */
  async function rerun(
    name: string,
    change: (copy: string, predictionsCopy: string) => Promise<void>,
    options: { freshBaseline?: boolean } = {},
  ) {
    const copy = join(root, `suite-${name}`);
    await cp(suite, copy, { recursive: true });
    const predictionsCopy = join(root, `predictions-${name}.jsonl`);
    await cp(predictions, predictionsCopy);
    // Only the skill changes in every case; `change` adds the attack on top.
    await appendFile(
      join(copy, "skills", "alpha", "agent-skills", "alpha", "SKILL.md"),
      "\nMore advice.\n",
    );
    await change(copy, predictionsCopy);
    const out = join(root, `run-${name}`);
    const summary = await runSuite({
      suite: copy,
      runDir: out,
      predictions: predictionsCopy,
      sandbox: "unsafe",
      cacheDir,
      reuse: [first],
      ...options,
    });
    const reused = runDirResults(out).filter((result) => result.provenance?.kind === "reused");
    return { out, summary, reused: reused.map((result) => result.requirement).sort() };
  }

  it("reuses every unassisted run when only the skill changed, and says so in the report", async () => {
    const { out, summary, reused } = await rerun("skill-only", async () => {});
    expect(reused).toEqual(["r1", "r2", "r3", "r4"]);
    expect(summary.reused).toBe(4);
    const results = runDirResults(out);
    // The assisted arm ran afresh with the new skill.
    expect(
      results.filter((result) => result.arm === "with" && result.provenance !== undefined),
    ).toEqual([]);
    const report = await reportRunDir(out);
    expect(report.provenance?.reused).toHaveLength(4);
    expect(report.provenance?.reused[0]?.runDir).toBe(first);
    const text = await runInProcess(["bench", "report", out]);
    expect(text.stdout).toContain("4 unassisted runs reused from earlier runs");
    expect(text.stdout).toContain("replay/alpha/r1/without#1 ←");
    // The reused scores are the first run's (without: 1, .5, 1, .5 by hand).
    const scores = results
      .filter((result) => result.arm === "without")
      .map((result) => result.passRatio);
    expect(scores).toEqual([1, 0.5, 1, 0.5]);
  });

  it("does not reuse with --fresh-baseline", async () => {
    const { reused } = await rerun("fresh", async () => {}, { freshBaseline: true });
    expect(reused).toEqual([]);
  });

  it("does not reuse a run whose verifier changed", async () => {
    const { reused } = await rerun("verifier", async (copy) => {
      await appendFile(
        join(copy, "skills", "alpha", "requirements", "r1", "verifier", "check.sh"),
        "# stricter\n",
      );
    });
    expect(reused).toEqual(["r2", "r3", "r4"]);
  });

  it("does not reuse when a limit changed", async () => {
    const { reused } = await rerun("limit", async (copy) => {
      const file = join(copy, "suite.yaml");
      await writeFile(
        file,
        (await readFile(file, "utf8")).replace("timeoutSeconds: 30", "timeoutSeconds: 31"),
      );
    });
    expect(reused).toEqual([]);
  });

  it("does not reuse when the base changed", async () => {
    const { reused } = await rerun("base", async (copy) => {
      const repo = join(root, "repo");
      await writeFile(join(repo, "EXTRA.md"), "another commit\n");
      await git(repo, "add", "-A");
      await git(repo, "-c", "commit.gpgsign=false", "commit", "-q", "-m", "more");
      const commit = await git(repo, "rev-parse", "HEAD");
      const file = join(copy, "skills", "alpha", "skill.yaml");
      await writeFile(
        file,
        (await readFile(file, "utf8")).replace(/commit: \S+/, `commit: ${commit}`),
      );
    });
    expect(reused).toEqual([]);
  });

  it("does not reuse when the recorded agent output changed (replay)", async () => {
    const { reused } = await rerun("agent-output", async (_copy, predictionsCopy) => {
      const text = await readFile(predictionsCopy, "utf8");
      const lines = text.split("\n").map((line) => {
        if (line === "") return line;
        const value = JSON.parse(line) as { requirement: string; arm: string; patch: string };
        return value.requirement === "r2" && value.arm === "without"
          ? JSON.stringify({ ...value, patch: newFilePatch("out/r2.txt", "good") })
          : line;
      });
      await writeFile(predictionsCopy, lines.join("\n"));
    });
    expect(reused).toEqual(["r1", "r3", "r4"]);
  });
});

describe("bench regrade", () => {
  it("re-scores stored patches with a changed verifier, runs no agent, and shows the deltas", async () => {
    const original = await plainRun();
    const stored = runDirResults(original);
    expect(stored.every((result) => result.patch !== undefined && result.patch.files === 1)).toBe(
      true,
    );

    // The new verifier of r1 wants "bad" instead of "good".
    const changed = join(root, "suite-regrade");
    await cp(suite, changed, { recursive: true });
    const check = join(changed, "skills", "alpha", "requirements", "r1", "verifier", "check.sh");
    await writeFile(check, (await readFile(check, "utf8")).replace("= good ]", "= bad ]"));

    const out = join(root, "run-regraded");
    const cli = await runInProcess(
      [
        "bench",
        "regrade",
        original,
        "--suite",
        changed,
        "--out",
        out,
        "--sandbox",
        "unsafe",
        "--json",
      ],
      { env: { ...process.env, SKILLSMITH_CACHE_DIR: cacheDir } },
    );
    expect(cli.code).toBe(0);
    const { regrade } = JSON.parse(cli.stdout) as {
      regrade: {
        runs: Array<{ rescored: boolean }>;
        rescored: number;
        kept: number;
        requirements: Array<{ requirement: string; arm: string; delta: number }>;
      };
    };
    expect(regrade.runs.filter((run) => !run.rescored)).toEqual([]);
    expect(regrade.rescored).toBe(2 * REQUIREMENTS);
    expect(regrade.kept).toBe(0);
    // By hand: r1 wrote good in both arms; the new verifier passes only "exists": 100% → 50%.
    const deltas = Object.fromEntries(
      regrade.requirements.map((item) => [`${item.requirement}/${item.arm}`, item.delta]),
    );
    expect(deltas).toEqual({
      "r1/with": -50,
      "r1/without": -50,
      "r2/with": 0,
      "r2/without": 0,
      "r3/with": 0,
      "r3/without": 0,
      "r4/with": 0,
      "r4/without": 0,
    });
    // No agent ran: the stored trajectory and timing are the original run's.
    const regraded = runDirResults(out);
    const before = new Map(stored.map((result) => [`${result.requirement}/${result.arm}`, result]));
    for (const result of regraded) {
      const old = before.get(`${result.requirement}/${result.arm}`);
      expect(result.agentMs).toBe(old?.agentMs);
      expect(result.provenance).toMatchObject({
        kind: "regraded",
        rescored: true,
        passRatio: old?.passRatio,
      });
      expect(result.fingerprint).toBeUndefined();
    }
    // The original run directory is untouched.
    expect(runDirResults(original).map((result) => result.passRatio)).toEqual(
      stored.map((result) => result.passRatio),
    );

    const text = await runInProcess(
      [
        "bench",
        "regrade",
        original,
        "--out",
        join(root, "run-regraded-same"),
        "--sandbox",
        "unsafe",
      ],
      { env: { ...process.env, SKILLSMITH_CACHE_DIR: cacheDir } },
    );
    expect(text.code).toBe(0);
    expect(text.stdout).toContain("8 re-scored, 0 kept");
    expect(text.stdout).toContain("0 of 8 changed");
  });

  it("refuses an existing --out, and keeps runs whose base changed since, with the reason", async () => {
    const original = await plainRun();
    await expect(
      regradeRunDir({ runDir: original, outDir: original, sandbox: "unsafe", cacheDir }),
    ).rejects.toThrow(/already holds a run/);
    // Attack: a suite pinning another commit (the "base changed" suite above) would score the
    // stored patches on other bytes than the agent saw: nothing is re-scored, each says why.
    const stale = await regradeRunDir({
      runDir: original,
      suite: join(root, "suite-base"),
      outDir: join(root, "run-regraded-other-base"),
      sandbox: "unsafe",
      cacheDir,
    });
    expect(stale.rescored).toBe(0);
    expect(new Set(stale.runs.map((run) => run.reason))).toEqual(
      new Set(["the suite now prepares a different base than the one the agent started from"]),
    );
  });
});
