/**
 * The paired runner's guarantees on a tiny generated suite (real git repository, real
 * processes, a shell verifier writing JUnit XML): kill -9 and resume, infrastructure failures
 * retried and never scored, timeouts scored 0 and flagged, the budget cap, bad predictions.
 */
import { spawn } from "node:child_process";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { finishTrajectory } from "../src/agents/trajectory.js";
import type { AgentHarnessV1, AgentRunRequest } from "../src/agents/types.js";
import { reportRunDir } from "../src/bench/analysis/load.js";
import { runSuite } from "../src/bench/run/runner.js";
import { ResultsStore } from "../src/bench/store/results.js";
import { runCli } from "../src/cli/program.js";
import { InfrastructureError } from "../src/core/errors.js";
import { runProcess } from "../src/core/process.js";
import { cliNodeArguments } from "./support/cli.js";
import { removeRunRoot, writeReplaySuite } from "./support/suites.js";

/** A configuration's default harness with `run` replaced by `run(request, inner)`. */
function wrapHarness(
  name: string,
  run: (request: AgentRunRequest, inner: AgentHarnessV1) => ReturnType<AgentHarnessV1["run"]>,
) {
  return (_configuration: unknown, defaults: () => AgentHarnessV1): AgentHarnessV1 => {
    const inner = defaults();
    return { specificationVersion: "v1", name, run: (request) => run(request, inner) };
  };
}

const REQUIREMENTS = 6;
let root: string;
let suite: string;
let predictions: string;
let cacheDir: string;

/** Requirement k is met ("good") in the with arm for every k, in the without arm for odd k. */
function expectedPassRatio(requirement: number, arm: "with" | "without"): number {
  if (arm === "with") return 1;
  // Without: odd requirements write "good" (2 of 2 checks), even ones "bad" (file exists: 1 of 2).
  return requirement % 2 === 1 ? 1 : 0.5;
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "bench-run-resume-"));
  cacheDir = join(root, "cache");
  // A verifier slow enough (0.2 s) that a kill lands while runs are still pending.
  ({ suite, predictions } = await writeReplaySuite(root, {
    requirements: REQUIREMENTS,
    verifierSleepSeconds: 0.2,
  }));
});

afterAll(async () => {
  await removeRunRoot(root);
});

function resultRows(runDir: string): Array<{ key: string; passRatio: number }> {
  const store = ResultsStore.openReadOnly(runDir);
  try {
    return store.results().map((result) => ({
      key: `${result.requirement}/${result.arm}#${result.repeat}`,
      passRatio: result.passRatio,
    }));
  } finally {
    store.close();
  }
}

function countResults(runDir: string): number {
  try {
    const database = new Database(join(runDir, "results.sqlite"), {
      readonly: true,
      fileMustExist: true,
    });
    try {
      return (database.prepare("SELECT COUNT(*) AS n FROM results").get() as { n: number }).n;
    } finally {
      database.close();
    }
  } catch {
    return 0;
  }
}

describe("bench run: kill -9 and resume", () => {
  it("loses no finished result, never double-counts, and matches an uninterrupted run", async () => {
    const argv = (out: string) => [
      ...cliNodeArguments(),
      "bench",
      "run",
      suite,
      "--predictions",
      predictions,
      "--out",
      out,
      "--sandbox",
      "unsafe",
    ];
    const environment = { ...process.env, SKILLSMITH_CACHE_DIR: cacheDir };
    const uninterrupted = join(root, "run-full");
    const full = await runProcess(process.execPath, argv(uninterrupted), {
      cwd: process.cwd(),
      env: environment,
      timeoutMs: 120_000,
    });
    expect(full.exitCode, full.stderr).toBe(0);

    const killed = join(root, "run-killed");
    const child = spawn(process.execPath, argv(killed), {
      cwd: process.cwd(),
      env: environment,
      stdio: "ignore",
    });
    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
      child.on("exit", (_code, signal) => resolve(signal)),
    );
    let atKill = 0;
    for (let waited = 0; waited < 60_000; waited += 25) {
      atKill = countResults(killed);
      if (atKill >= 3) break;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    child.kill("SIGKILL");
    expect(await exited).toBe("SIGKILL");
    // The kill must land halfway for the test to mean anything.
    expect(atKill).toBeGreaterThanOrEqual(3);
    expect(countResults(killed)).toBeLessThan(2 * REQUIREMENTS);

    const resumed = await runProcess(process.execPath, argv(killed), {
      cwd: process.cwd(),
      env: environment,
      timeoutMs: 120_000,
    });
    expect(resumed.exitCode, resumed.stderr).toBe(0);

    const expected = [];
    for (let k = 1; k <= REQUIREMENTS; k += 1) {
      for (const arm of ["with", "without"] as const) {
        expected.push({ key: `r${k}/${arm}#1`, passRatio: expectedPassRatio(k, arm) });
      }
    }
    const sort = (rows: Array<{ key: string; passRatio: number }>) =>
      [...rows].sort((left, right) => left.key.localeCompare(right.key));
    expect(sort(resultRows(killed))).toEqual(sort(expected));
    expect(sort(resultRows(uninterrupted))).toEqual(sort(expected));
    // One scored attempt per key: the result and its attempt row share a transaction.
    const store = ResultsStore.openReadOnly(killed);
    try {
      const scored = store.attempts().filter((attempt) => attempt.outcome === "scored");
      expect(scored).toHaveLength(2 * REQUIREMENTS);
    } finally {
      store.close();
    }
  }, 240_000);
});

describe("bench run: failures, timeouts and budget", () => {
  it("re-executes infrastructure failures and never scores them", async () => {
    const runDir = join(root, "run-infra");
    const failedOnce = new Set<string>();
    const summary = await runSuite({
      suite,
      runDir,
      predictions,
      sandbox: "unsafe",
      cacheDir,
      harnessFor: wrapHarness("flaky", async (request, inner) => {
        const key = `${request.taskId}/${request.arm}`;
        if (!failedOnce.has(key)) {
          failedOnce.add(key);
          throw new InfrastructureError("model.request-failed", "connection refused");
        }
        return inner.run(request);
      }),
    });
    expect(summary.executed).toBe(2 * REQUIREMENTS);
    expect(summary.failed).toEqual([]);
    const store = ResultsStore.openReadOnly(runDir);
    try {
      const results = store.results();
      expect(results).toHaveLength(2 * REQUIREMENTS);
      for (const result of results) {
        expect(result.attempts).toBe(2);
        const k = Number(result.requirement.slice(1));
        expect(result.passRatio).toBe(expectedPassRatio(k, result.arm as "with" | "without"));
      }
      const attempts = store.attempts();
      expect(attempts.filter((attempt) => attempt.outcome === "infra_error")).toHaveLength(
        2 * REQUIREMENTS,
      );
      expect(attempts.filter((attempt) => attempt.outcome === "scored")).toHaveLength(
        2 * REQUIREMENTS,
      );
    } finally {
      store.close();
    }
    const report = await reportRunDir(runDir);
    expect(report.runs).toEqual({ scored: 2 * REQUIREMENTS, infraAttempts: 2 * REQUIREMENTS });
  }, 120_000);

  it("gives a key up after the attempt bound and stores no result for it", async () => {
    const runDir = join(root, "run-infra-always");
    const summary = await runSuite({
      suite,
      runDir,
      predictions,
      sandbox: "unsafe",
      cacheDir,
      maxAttempts: 2,
      configs: ["replay"],
      harnessFor: wrapHarness("broken-for-r1", async (request, inner) => {
        if (request.taskId === "alpha/r1") {
          return finishTrajectory({
            harness: "broken-for-r1",
            events: [],
            skillsShown: [],
            skillsShownSource: "none",
            usage: { inputTokens: 0, cachedInputTokens: 0, outputTokens: 0 },
            wallTimeMs: 1,
            status: "infra_error",
            error: "rate limit exhausted",
            rawLog: "",
          });
        }
        return inner.run(request);
      }),
    });
    expect(
      summary.failed.map((failure) => `${failure.key.requirement}/${failure.key.arm}`).sort(),
    ).toEqual(["r1/with", "r1/without"]);
    expect(summary.failed.every((failure) => failure.attempts === 2)).toBe(true);
    expect(summary.executed).toBe(2 * REQUIREMENTS - 2);
    expect(resultRows(runDir).some((row) => row.key.startsWith("r1/"))).toBe(false);
  }, 120_000);

  it("scores a run killed by its time limit as 0 and flags it", async () => {
    const runDir = join(root, "run-timeout");
    const summary = await runSuite({
      suite,
      runDir,
      predictions,
      sandbox: "unsafe",
      cacheDir,
      configs: ["replay"],
      // A real process overrunning a real limit: the sandbox kills `sleep` after 300 ms.
      harnessFor: wrapHarness("slow-on-r2-with", async (request, inner) => {
        const trajectory = await inner.run(request);
        if (request.taskId !== "alpha/r2" || request.arm !== "with") return trajectory;
        const execution = await request.sandbox.exec({
          command: ["sleep", "10"],
          workspace: request.workspace,
          workspaceMountPath: request.workspaceMountPath ?? request.workspace,
          network: "none",
          limits: { timeoutMs: 300 },
        });
        return { ...trajectory, status: execution.timedOut ? "timeout" : trajectory.status };
      }),
    });
    expect(summary.executed).toBe(2 * REQUIREMENTS);
    const store = ResultsStore.openReadOnly(runDir);
    try {
      const slow = store
        .results()
        .find((result) => result.requirement === "r2" && result.arm === "with");
      // The patch was applied ("good" would pass 2 of 2), yet a timeout scores 0.
      expect(slow?.status).toBe("timeout");
      expect(slow?.passRatio).toBe(0);
      expect(slow?.flags).toContain("agent-timeout");
    } finally {
      store.close();
    }
    const report = await reportRunDir(runDir);
    const profile = report.profiles[0];
    // d = 100·(y1 − y0): r2 is 0 − 0.5 → −50 with the timeout; r1,r3,r5: 0; r4,r6: +50.
    expect(profile?.requirements.map((outcome) => outcome.delta)).toEqual([0, -50, 0, 50, 0, 50]);
    expect(profile?.requirements[1]?.timeout).toBe(true);
    // Without the timeout pair: deltas 0, 0, 50, 0, 50 → Δ = 20.
    expect(profile?.sensitivity.withoutTimeouts.n).toBe(5);
    expect(profile?.sensitivity.withoutTimeouts.delta).toBeCloseTo(20, 10);
    expect(report.pairs.timeouts).toBe(1);
  }, 120_000);

  it("stops scheduling new runs once the recorded cost reaches the budget", async () => {
    const runDir = join(root, "run-budget");
    const summary = await runSuite({
      suite,
      runDir,
      predictions,
      sandbox: "unsafe",
      cacheDir,
      concurrency: 1,
      budgetUsd: 1,
      harnessFor: wrapHarness("priced", async (request, inner) => {
        const trajectory = await inner.run(request);
        return { ...trajectory, usage: { ...trajectory.usage, costUsd: 0.4 } };
      }),
    });
    // 0 → 0.4 → 0.8 → 1.2: the third run starts below the budget, the fourth would not.
    expect(summary.executed).toBe(3);
    expect(summary.stoppedByBudget).toBe(true);
    expect(summary.notScheduled).toBe(2 * REQUIREMENTS - 3);
    expect(summary.costUsd).toBeCloseTo(1.2, 10);
    expect(countResults(runDir)).toBe(3);
  }, 120_000);
});

describe("bench run: predictions file", () => {
  it("exits 2 naming the file and line of a malformed prediction", async () => {
    const bad = join(root, "bad.jsonl");
    await writeFile(
      bad,
      `${JSON.stringify({ skill: "alpha", requirement: "r1", arm: "with", patch: "" })}\n{"skill": "alpha", "arm": "sideways"}\n`,
    );
    let stderr = "";
    const code = await runCli(
      [
        "bench",
        "run",
        suite,
        "--predictions",
        bad,
        "--out",
        join(root, "run-bad"),
        "--sandbox",
        "unsafe",
      ],
      {
        stdout: () => undefined,
        stderr: (text) => {
          stderr += text;
        },
        env: { ...process.env, SKILLSMITH_CACHE_DIR: cacheDir },
      },
    );
    expect(code).toBe(2);
    expect(stderr).toContain(bad);
    expect(stderr).toContain("line 2");
    expect(stderr).not.toMatch(/\n\s+at /);
  });
});
