/**
 * Distributed evaluation on a real `redis-server` (started by the test on a free port): a suite
 * run with the replay agent through `bench run --queue` and three `skillsmith worker` processes
 * of the built CLI (`dist/`), one killed with -9 while it holds a run and the coordinator killed
 * and restarted halfway, must store exactly the results of a single-process `runSuite`, each
 * key once. Skipped without `redis-server` or without `dist/` (built by `npm test`'s pretest).
 *
 * By hand: requirement k's `with` patch writes "good" (2 of 2 checks); its `without` patch
 * writes "good" for odd k (2 of 2) and "bad" for even k (the file exists: 1 of 2).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile } from "node:fs/promises";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runSuiteOnQueue } from "../src/bench/queue/coordinator.js";
import {
  jobIdPrefix,
  queueNameOf,
  rateLimitGroupOf,
  registryKeys,
} from "../src/bench/queue/jobs.js";
import { runQueueWorker } from "../src/bench/queue/worker.js";
import { runSuite } from "../src/bench/run/runner.js";
import { ResultsStore } from "../src/bench/store/results.js";
import { runProcess } from "../src/core/process.js";
import { findOnPath } from "../src/env/sandbox/bubblewrap.js";
import { runInProcess } from "./support/cli.js";
import { exitOf, waitFor } from "./support/processes.js";
import { type RedisServer, startRedisServer } from "./support/redis.js";
import { removeRunRoot, writeReplaySuite } from "./support/suites.js";

const hasRedisServer = findOnPath("redis-server") !== null;
const binary = resolve(import.meta.dirname, "..", "dist", "cli", "main.js");
const hasBuiltCli = existsSync(binary);

const REQUIREMENTS = 8;
let root: string;
let suite: string;
let predictions: string;
let cacheDir: string;
let redisPort: number;
let redisServer: RedisServer | undefined;
const children: ChildProcess[] = [];

function expectedPassRatio(requirement: number, arm: "with" | "without"): number {
  if (arm === "with") return 1;
  return requirement % 2 === 1 ? 1 : 0.5;
}

/** Send one command over a raw socket (the reply is not awaited: the server may drop us). */
function redisCommand(port: number, command: string): Promise<void> {
  return new Promise((resolveSent) => {
    const socket = connect({ host: "127.0.0.1", port });
    socket.on("connect", () => socket.write(`${command}\r\n`, () => resolveSent()));
    socket.on("data", () => socket.destroy());
    socket.on("error", () => resolveSent());
  });
}

/** `bench run <suite> --predictions <predictions> --out <runDir>`, then `options`. */
function benchRunArgv(runDir: string, ...options: string[]): string[] {
  return ["bench", "run", suite, "--predictions", predictions, "--out", runDir, ...options];
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "bench-queue-"));
  cacheDir = join(root, "cache");
  // Slow enough (0.4 s) that kills land while runs are in flight.
  ({ suite, predictions } = await writeReplaySuite(root, {
    requirements: REQUIREMENTS,
    verifierSleepSeconds: 0.4,
  }));

  if (hasRedisServer) {
    const redisDir = join(root, "redis");
    await mkdir(redisDir);
    redisServer = await startRedisServer(redisDir);
    redisPort = redisServer.port;
    // The reference every queue run must reproduce: one process, the in-process runner. It
    // also prepares the skill's base in the shared cache before anything is timed.
    const single = await runSuite({
      suite,
      runDir: join(root, "run-single"),
      predictions,
      sandbox: "unsafe",
      cacheDir,
    });
    if (single.executed !== 2 * REQUIREMENTS) throw new Error("the reference run is incomplete");
  }
});

afterAll(async () => {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  }
  if (redisServer !== undefined) await redisServer.stop();
  await removeRunRoot(root);
});

function storedRows(runDir: string): Array<{ key: string; passRatio: number }> {
  if (!existsSync(join(runDir, "results.sqlite"))) return [];
  const store = ResultsStore.openReadOnly(runDir);
  try {
    return store
      .results()
      .map((result) => ({
        key: `${result.config}/${result.requirement}/${result.arm}#${result.repeat}`,
        passRatio: result.passRatio,
      }))
      .sort((left, right) => left.key.localeCompare(right.key));
  } finally {
    store.close();
  }
}

describe("bench run --queue with skillsmith worker processes", () => {
  it.skipIf(!hasRedisServer || !hasBuiltCli)(
    "survives a worker killed with -9 and a coordinator restart, and stores exactly the single-process results (needs redis-server and dist/)",
    async () => {
      const url = `redis://127.0.0.1:${redisPort}/3`;
      const environment = { ...process.env, SKILLSMITH_CACHE_DIR: cacheDir };

      const reference = join(root, "run-single");

      const workers = [0, 1, 2].map(() => {
        const child = spawn(
          process.execPath,
          [binary, "worker", "--queue", url, "--allow-unsafe", "--lock-duration", "1500"],
          { env: environment, stdio: ["ignore", "ignore", "pipe"] },
        );
        let stderr = "";
        child.stderr?.on("data", (chunk: Buffer) => {
          stderr += chunk.toString();
        });
        children.push(child);
        return { child, stderr: () => stderr };
      });

      const runDir = join(root, "run-queue");
      const coordinatorArgv = [
        binary,
        ...benchRunArgv(runDir, "--sandbox", "unsafe", "--queue", url, "--poll-interval", "100"),
      ];
      const coordinator = spawn(process.execPath, coordinatorArgv, {
        env: environment,
        stdio: "ignore",
      });
      children.push(coordinator);

      const redis = new Redis({ host: "127.0.0.1", port: redisPort, db: 3 });
      const group = rateLimitGroupOf({
        id: "replay",
        agent: "replay",
        limits: { timeoutSeconds: 30 },
      });
      const queue = new Queue(queueNameOf(group), { connection: redis, prefix: "skillsmith" });
      try {
        // Kill worker 0 while it holds a run: its job must come back after the lock expires.
        const victim = workers[0];
        const victimPid = victim?.child.pid;
        const heldJob = await waitFor("worker 0 to hold a run", async () => {
          const active = await queue.getActive();
          return active.find((job) => job.processedBy?.endsWith(`:${victimPid}`))?.id;
        });
        victim?.child.kill("SIGKILL");
        expect((await exitOf(victim?.child as ChildProcess)).signal).toBe("SIGKILL");

        // Kill the coordinator halfway; the surviving workers carry on without it.
        await waitFor("a third of the results to be stored", () =>
          storedRows(runDir).length >= 5 ? true : undefined,
        );
        coordinator.kill("SIGKILL");
        expect((await exitOf(coordinator)).signal).toBe("SIGKILL");
        const atKill = storedRows(runDir).length;
        expect(atKill).toBeLessThan(2 * REQUIREMENTS);
        const runId = JSON.parse(await readFile(join(runDir, "queue.json"), "utf8")).runId;
        // Results finished while no coordinator runs stay in Redis for the restarted one.
        await waitFor("a result to wait in Redis", async () => {
          const completed = await queue.getRanges(["completed"], 0, -1);
          return completed.some((id) => id.startsWith(jobIdPrefix(runId))) ? true : undefined;
        });

        const resumed = await runProcess(process.execPath, coordinatorArgv, {
          env: environment,
          timeoutMs: 60_000,
        });
        expect(resumed.exitCode, resumed.stderr).toBe(0);

        const expected = [];
        for (let k = 1; k <= REQUIREMENTS; k += 1) {
          for (const arm of ["with", "without"] as const) {
            expected.push({ key: `replay/r${k}/${arm}#1`, passRatio: expectedPassRatio(k, arm) });
          }
        }
        expected.sort((left, right) => left.key.localeCompare(right.key));
        expect(storedRows(reference)).toEqual(expected);
        expect(storedRows(runDir)).toEqual(storedRows(reference));
        // Each key scored exactly once, the run held by the killed worker included.
        const store = ResultsStore.openReadOnly(runDir);
        try {
          const scored = store.attempts().filter((attempt) => attempt.outcome === "scored");
          expect(scored).toHaveLength(2 * REQUIREMENTS);
          expect(
            new Set(scored.map((attempt) => `${attempt.requirement}/${attempt.arm}`)).size,
          ).toBe(2 * REQUIREMENTS);
        } finally {
          store.close();
        }
        expect(heldJob.startsWith(jobIdPrefix(runId))).toBe(true);
        // Collected jobs are removed: nothing of this run is left in Redis.
        const left = await queue.getRanges(
          ["completed", "failed", "active", "waiting", "delayed"],
          0,
          -1,
        );
        expect(left.filter((id) => id.startsWith(jobIdPrefix(runId)))).toEqual([]);
        expect(await redis.sismember(registryKeys("skillsmith").groups, group)).toBe(1);
      } finally {
        await queue.close();
        redis.disconnect();
        for (const worker of workers.slice(1)) worker.child.kill("SIGTERM");
        for (const worker of workers.slice(1)) {
          const exit = await exitOf(worker.child);
          expect(exit.code, worker.stderr()).toBe(0);
        }
      }
    },
    // Seconds on an idle machine; the cap allows for a loaded one (each CLI start is slow there).
    180_000,
  );

  it.skipIf(!hasRedisServer)(
    "puts no API key into the queue: job data carries the base URL only (needs redis-server)",
    async () => {
      const url = `redis://127.0.0.1:${redisPort}/4`;
      const secret = "sk-coordinator-secret-0123456789";
      const controller = new AbortController();
      // No worker serves this queue: the jobs wait in Redis, where the test reads them, and the
      // run is then aborted (an already-aborted run rightly enqueues nothing).
      const running = runSuiteOnQueue({
        suite,
        runDir: join(root, "run-keys"),
        predictions,
        sandbox: "unsafe",
        queue: url,
        modelEndpoint: { baseUrl: "http://127.0.0.1:9/v1", apiKey: secret },
        signal: controller.signal,
      });
      const redis = new Redis({ host: "127.0.0.1", port: redisPort, db: 4 });
      try {
        const dumpQueue = async (): Promise<string> => {
          let dump = "";
          for (const key of await redis.keys("skillsmith:*")) {
            const type = await redis.type(key);
            if (type === "hash") dump += JSON.stringify(await redis.hgetall(key));
            else if (type === "string") dump += (await redis.get(key)) ?? "";
            else if (type === "list") dump += JSON.stringify(await redis.lrange(key, 0, -1));
            else if (type === "set") dump += JSON.stringify(await redis.smembers(key));
            else if (type === "zset") dump += JSON.stringify(await redis.zrange(key, "0", "-1"));
          }
          return dump;
        };
        let dump = await dumpQueue();
        const deadline = Date.now() + 60_000;
        while (!dump.includes('\\"requirement\\":\\"r1\\"') && Date.now() < deadline) {
          await new Promise((resolve) => setTimeout(resolve, 200));
          dump = await dumpQueue();
        }
        controller.abort();
        const summary = await running;
        expect(summary.aborted).toBe(true);
        // The jobs are there, with the base URL, and the key appears nowhere.
        expect(dump).toContain("http://127.0.0.1:9/v1");
        expect(dump).toContain('\\"requirement\\":\\"r1\\"');
        expect(dump).not.toContain(secret);
      } finally {
        controller.abort();
        redis.disconnect();
      }
    },
    120_000,
  );

  it.skipIf(!hasRedisServer)(
    "applies a model's rate limit across workers and survives dropped connections, reporting them (needs redis-server)",
    async () => {
      const url = `redis://127.0.0.1:${redisPort}/5`;
      const logs: string[] = [];
      const stop = new AbortController();
      // Two in-process workers with room for 8 runs at once: only the limiter holds them back.
      const workers = [0, 1].map((index) =>
        runQueueWorker({
          queue: url,
          concurrency: 4,
          allowUnsafe: true,
          cacheDir,
          registryPollMs: 100,
          lockDurationMs: 5_000,
          name: `in-process-${index}`,
          signal: stop.signal,
          onLog: (message) => logs.push(message),
        }),
      );
      const coordinatorLogs: string[] = [];
      const runDir = join(root, "run-limited");
      let dropped = 0;
      const summary = await runSuiteOnQueue({
        suite,
        runDir,
        predictions,
        sandbox: "unsafe",
        queue: url,
        pollIntervalMs: 100,
        rateLimits: { replay: { max: 3, durationMs: 1_000 } },
        onConnectionEvent: (message) => coordinatorLogs.push(message),
        onProgress: (progress) => {
          // Twice during the run, every client connection is dropped by the server.
          if ((progress.done === 2 && dropped === 0) || (progress.done === 8 && dropped === 1)) {
            dropped += 1;
            void redisCommand(redisPort, "CLIENT KILL TYPE normal");
          }
        },
      });
      stop.abort();
      await Promise.all(workers);
      expect(summary.failed).toEqual([]);
      expect(dropped).toBe(2);
      expect(storedRows(runDir)).toEqual(storedRows(join(root, "run-single")));

      // 16 starts at most 3 per second need at least ceil(16 / 3) − 1 = 5 full windows between
      // the first and the last start, whatever the machine's speed (unlimited, 8 slots would
      // start them in two waves).
      const redis = new Redis({ host: "127.0.0.1", port: redisPort, db: 5 });
      try {
        expect(await redis.hget(registryKeys("skillsmith").limits, "replay")).toBe(
          JSON.stringify({ max: 3, durationMs: 1_000 }),
        );
      } finally {
        redis.disconnect();
      }
      const store = ResultsStore.openReadOnly(runDir);
      try {
        const starts = store
          .results()
          .map((result) => Date.parse(result.startedAt))
          .sort((left, right) => left - right);
        expect(starts).toHaveLength(2 * REQUIREMENTS);
        // A run's recorded start follows its job's start by the suite load (well under 1 s).
        expect((starts.at(-1) ?? 0) - (starts[0] ?? 0)).toBeGreaterThanOrEqual(4_000);
      } finally {
        store.close();
      }
      expect(logs.some((line) => /lost/.test(line))).toBe(true);
      expect(logs.some((line) => /restored after/.test(line))).toBe(true);
      expect(coordinatorLogs.some((line) => /lost/.test(line))).toBe(true);
      expect(coordinatorLogs.some((line) => /restored after/.test(line))).toBe(true);
    },
    120_000,
  );

  it("refuses a malformed --queue URL and --rate-limit without --queue (exit 2)", async () => {
    const cli = { cwd: root, env: { ...process.env, SKILLSMITH_CACHE_DIR: cacheDir } };
    const bad = await runInProcess(
      benchRunArgv(join(root, "run-bad-url"), "--queue", "http://127.0.0.1:6379/0"),
      cli,
    );
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--queue expects the redis:\/\/ or rediss:\/\/ scheme/);
    const orphan = await runInProcess(
      benchRunArgv(join(root, "run-bad-limit"), "--rate-limit", "replay=1/1s"),
      cli,
    );
    expect(orphan.code).toBe(2);
    expect(orphan.stderr).toMatch(/--rate-limit needs --queue/);
  });
});
