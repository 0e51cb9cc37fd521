/**
 * Distributed evaluation throughput: runs per minute through Redis with 1, 2 and 4 worker
 * processes, beside the in-process runner (one process, concurrency 1) measured in the same
 * run. Needs `redis-server` (started here on a free port, nothing persisted).
 *
 * The suite: one skill, 8 requirements (16 runs), the replay agent, a shell verifier that
 * sleeps 0.5 s (the share of a real run spent waiting rather than computing: real runs wait on
 * a model for minutes). Sandbox `unsafe` for every figure, so only the distribution differs.
 * Workers are separate `skillsmith worker` processes (the built `dist/` when present, else the
 * sources through tsx), started and attached to the queue before the clock starts; the timed
 * span is one `runSuiteOnQueue` call: enqueue, execution, collection into SQLite.
 *
 * Rows: wall time per run (median over samples); `baseline` is the in-process figure and
 * `ratio` the speed-up in runs per minute. On a 2-core machine 4 workers compete for 2 cores.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Redis } from "ioredis";
import { runSuiteOnQueue } from "../src/bench/queue/coordinator.js";
import { queueNameOf, registryKeys } from "../src/bench/queue/jobs.js";
import { runSuite } from "../src/bench/run/runner.js";
import { ResultsStore } from "../src/bench/store/results.js";
import { findOnPath } from "../src/env/sandbox/bubblewrap.js";
import { exitOf, waitFor } from "../test/support/processes.js";
import { type RedisServer, startRedisServer } from "../test/support/redis.js";
import { type Benchmark, type BenchmarkRow, summarise } from "./harness.js";
import { writeBenchSuite } from "./suites.js";

const requirements = 8;
const samples = 1;
const workerCounts = [1, 2, 4] as const;
const repositoryRoot = resolve(import.meta.dirname, "..");

function allScored(runDir: string): boolean {
  const store = ResultsStore.openReadOnly(runDir);
  try {
    const results = store.results();
    return results.length === 2 * requirements && results.every((result) => result.passRatio === 1);
  } finally {
    store.close();
  }
}

/** Start `count` worker processes and wait until each has attached to the replay queue. */
async function startWorkers(
  count: number,
  url: string,
  environment: NodeJS.ProcessEnv,
): Promise<ChildProcess[]> {
  const builtCli = join(repositoryRoot, "dist", "cli", "main.js");
  const command = existsSync(builtCli)
    ? [builtCli]
    : ["--import", "tsx", join(repositoryRoot, "src", "cli", "main.ts")];
  return Promise.all(
    Array.from({ length: count }, async () => {
      const child = spawn(
        process.execPath,
        [...command, "worker", "--queue", url, "--allow-unsafe"],
        { cwd: repositoryRoot, env: environment, stdio: ["ignore", "ignore", "pipe"] },
      );
      let stderr = "";
      child.stderr?.on("data", (chunk: Buffer) => {
        stderr += chunk.toString();
      });
      await waitFor(
        "a worker to attach to the queue",
        () => (stderr.includes(`queue ${queueNameOf("replay")}`) ? true : undefined),
        60_000,
      );
      return child;
    }),
  );
}

async function stopWorkers(children: readonly ChildProcess[]): Promise<void> {
  await Promise.all(
    children.map((child) => {
      child.kill("SIGTERM");
      return exitOf(child);
    }),
  );
}

const benchmark: Benchmark = {
  name: "queue",
  async run() {
    if (findOnPath("redis-server") === null) {
      throw new Error("redis-server is not installed (apt-get install redis-server)");
    }
    const root = await mkdtemp(join(tmpdir(), "skillsmith-queue-bench-"));
    let redisServer: RedisServer | undefined;
    try {
      redisServer = await startRedisServer(root, 60_000);
      const { port } = redisServer;
      const { suite, predictions } = await writeBenchSuite(root, {
        name: "queue-bench",
        requirements,
        verifierSleepSeconds: 0.5,
      });
      const cacheDir = join(root, "cache");
      const environment = { ...process.env, SKILLSMITH_CACHE_DIR: cacheDir };
      // Prepare the base once, outside the timings (every path then reuses the cached base).
      await runSuite({
        suite,
        runDir: join(root, "warmup"),
        predictions,
        sandbox: "unsafe",
        cacheDir,
      });

      const single: number[] = [];
      let scoredEverywhere = true;
      for (let sample = 0; sample < samples; sample += 1) {
        const runDir = join(root, `single-${sample}`);
        const started = performance.now();
        const summary = await runSuite({ suite, runDir, predictions, sandbox: "unsafe", cacheDir });
        single.push((performance.now() - started) / summary.executed);
        scoredEverywhere &&= allScored(runDir);
      }
      const baselineMs = summarise(single).medianMs;

      const rows: BenchmarkRow[] = [];
      for (const [index, count] of workerCounts.entries()) {
        // A database per worker count, so no job of one measurement is seen by the next.
        const url = `redis://127.0.0.1:${port}/${index + 1}`;
        const redis = new Redis({ host: "127.0.0.1", port, db: index + 1 });
        await redis.sadd(registryKeys("skillsmith").groups, "replay");
        redis.disconnect();
        const workers = await startWorkers(count, url, environment);
        const perRun: number[] = [];
        try {
          for (let sample = 0; sample < samples; sample += 1) {
            const runDir = join(root, `queue-${count}-${sample}`);
            const started = performance.now();
            const summary = await runSuiteOnQueue({
              suite,
              runDir,
              predictions,
              sandbox: "unsafe",
              queue: url,
              pollIntervalMs: 100,
            });
            perRun.push((performance.now() - started) / summary.executed);
            scoredEverywhere &&= allScored(runDir);
          }
        } finally {
          await stopWorkers(workers);
        }
        const medianMs = summarise(perRun).medianMs;
        rows.push({
          case: `queue, ${count} worker${count === 1 ? "" : "s"}: wall time per run`,
          medianMs,
          baselineMs,
          ratio: baselineMs / medianMs,
          note: `${(60_000 / medianMs).toFixed(0)} runs/min vs ${(60_000 / baselineMs).toFixed(0)} runs/min in one process`,
        });
      }
      const check = scoredEverywhere ? "all runs scored 100% as designed" : "SOME RUNS MISSCORED";
      rows.unshift({
        case: "in-process runner (concurrency 1): wall time per run",
        medianMs: baselineMs,
        note: `${(60_000 / baselineMs).toFixed(0)} runs/min; ${2 * requirements} runs per sample, ${samples} sample(s); ${check}`,
      });
      return rows;
    } finally {
      await redisServer?.stop();
      await rm(root, { recursive: true, force: true });
    }
  },
};

export default benchmark;
