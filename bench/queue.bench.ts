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
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { connect, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Redis } from "ioredis";
import { runSuiteOnQueue } from "../src/bench/queue/coordinator.js";
import { queueNameOf, registryKeys } from "../src/bench/queue/jobs.js";
import { runSuite } from "../src/bench/run/runner.js";
import { ResultsStore } from "../src/bench/store/results.js";
import { runProcess } from "../src/core/process.js";
import { findOnPath } from "../src/env/sandbox/bubblewrap.js";
import type { Benchmark, BenchmarkRow } from "./harness.js";

const requirements = 8;
const samples = 1;
const workerCounts = [1, 2, 4] as const;
const repositoryRoot = resolve(import.meta.dirname, "..");

async function git(cwd: string, ...args: string[]): Promise<string> {
  const result = await runProcess("git", args, {
    cwd,
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: "bench",
      GIT_AUTHOR_EMAIL: "bench@example.com",
      GIT_COMMITTER_NAME: "bench",
      GIT_COMMITTER_EMAIL: "bench@example.com",
    },
  });
  if (result.exitCode !== 0) throw new Error(`git ${args.join(" ")}: ${result.stderr}`);
  return result.stdout.trim();
}

async function makeSuite(root: string): Promise<{ suite: string; predictions: string }> {
  const repo = join(root, "repo");
  await mkdir(join(repo, "src"), { recursive: true });
  for (let index = 0; index < 20; index += 1) {
    await writeFile(join(repo, "src", `module${index}.txt`), `content ${index}\n`.repeat(50));
  }
  await git(repo, "init", "-q", "-b", "main");
  await git(repo, "add", "-A");
  await git(repo, "-c", "commit.gpgsign=false", "commit", "-q", "-m", "init");
  const commit = await git(repo, "rev-parse", "HEAD");
  const suite = join(root, "suite");
  const skill = join(suite, "skills", "alpha");
  await mkdir(join(skill, "agent-skills", "alpha"), { recursive: true });
  await writeFile(
    join(suite, "suite.yaml"),
    "format: skillsmith-suite/1\nname: queue-bench\nconfigurations:\n  - id: replay\n    agent: replay\n    limits: { timeoutSeconds: 60 }\n",
  );
  await writeFile(
    join(skill, "skill.yaml"),
    `repository:\n  path: ${repo}\n  commit: ${commit}\n  name: benchrepo\n`,
  );
  await writeFile(
    join(skill, "agent-skills", "alpha", "SKILL.md"),
    "---\nname: alpha\ndescription: Write result files. Use when a task asks for one.\n---\n\n# Alpha\n",
  );
  const lines: string[] = [];
  for (let k = 1; k <= requirements; k += 1) {
    const folder = join(skill, "requirements", `r${k}`);
    await mkdir(join(folder, "verifier"), { recursive: true });
    await writeFile(
      join(folder, "requirement.md"),
      `## Requirement\n\nWrite out/r${k}.txt.\n\n## File Operations\n\n- \`out/r${k}.txt\`\n\n## Acceptance Criteria\n\n- it exists\n`,
    );
    await writeFile(
      join(folder, "verifier", "check.sh"),
      `sleep 0.5\nif [ -f "$SKILLSMITH_WORKSPACE/out/r${k}.txt" ]; then r='<testcase classname="r" name="exists"/>'; else r='<testcase classname="r" name="exists"><failure message="missing"/></testcase>'; fi\necho "<testsuite name=\\"r\\">$r</testsuite>" > junit.xml\n`,
    );
    await writeFile(
      join(folder, "verifier.yaml"),
      "command: sh check.sh\nfiles: [check.sh]\njunit: junit.xml\n",
    );
    for (const arm of ["without", "with"]) {
      const patch = `diff --git a/out/r${k}.txt b/out/r${k}.txt\nnew file mode 100644\n--- /dev/null\n+++ b/out/r${k}.txt\n@@ -0,0 +1 @@\n+${arm}\n`;
      lines.push(JSON.stringify({ skill: "alpha", requirement: `r${k}`, arm, patch }));
    }
  }
  const predictions = join(root, "predictions.jsonl");
  await writeFile(predictions, `${lines.join("\n")}\n`);
  return { suite, predictions };
}

async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() =>
        typeof address === "object" && address !== null
          ? resolvePort(address.port)
          : reject(new Error("no port")),
      );
    });
  });
}

function ping(port: number): Promise<boolean> {
  return new Promise((resolvePing) => {
    const socket = connect({ host: "127.0.0.1", port });
    let reply = "";
    socket.on("connect", () => socket.write("PING\r\n"));
    socket.on("data", (chunk) => {
      reply += chunk.toString();
      if (reply.includes("\r\n")) {
        socket.destroy();
        resolvePing(reply.startsWith("+PONG"));
      }
    });
    socket.on("error", () => resolvePing(false));
  });
}

async function until(what: string, probe: () => Promise<boolean> | boolean): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolveWait) => setTimeout(resolveWait, 50));
  }
}

function allScored(runDir: string): boolean {
  const store = ResultsStore.openReadOnly(runDir);
  try {
    const results = store.results();
    return results.length === 2 * requirements && results.every((result) => result.passRatio === 1);
  } finally {
    store.close();
  }
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((left, right) => left - right);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
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
      await until("a worker to attach to the queue", () =>
        stderr.includes(`queue ${queueNameOf("replay")}`),
      );
      return child;
    }),
  );
}

async function stopWorkers(children: readonly ChildProcess[]): Promise<void> {
  await Promise.all(
    children.map(
      (child) =>
        new Promise<void>((resolveExit) => {
          if (child.exitCode !== null || child.signalCode !== null) {
            resolveExit();
            return;
          }
          child.once("exit", () => resolveExit());
          child.kill("SIGTERM");
        }),
    ),
  );
}

const benchmark: Benchmark = {
  name: "queue",
  async run() {
    if (findOnPath("redis-server") === null) {
      throw new Error("redis-server is not installed (apt-get install redis-server)");
    }
    const root = await mkdtemp(join(tmpdir(), "skillsmith-queue-bench-"));
    const port = await freePort();
    const redisServer = spawn(
      "redis-server",
      [
        "--port",
        String(port),
        "--bind",
        "127.0.0.1",
        "--save",
        "",
        "--appendonly",
        "no",
        "--dir",
        root,
      ],
      { stdio: "ignore" },
    );
    try {
      await until("redis-server", () => ping(port));
      const { suite, predictions } = await makeSuite(root);
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
      const baselineMs = median(single);

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
        const medianMs = median(perRun);
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
      redisServer.kill("SIGTERM");
      await new Promise((resolveExit) => redisServer.once("exit", resolveExit));
      await rm(root, { recursive: true, force: true });
    }
  },
};

export default benchmark;
