/**
 * One run session, two schedulers: every case below runs against the in-process scheduler
 * (`runSuite`) and the queue scheduler (`runSuiteOnQueue` with a real `redis-server` on a free
 * port and the real queue worker, `runQueueWorker`, in this process), with the expected rows
 * worked out by hand; then the two schedulers' run directories are compared row by row:
 *
 * - a variant given on the command line (`variants`) reaches the workers, checked by digest;
 * - every queue result carries the run's fingerprint, so a queue run directory serves as a
 *   `--reuse` source, and `--reuse` on the queue copies the same unassisted runs with the same
 *   provenance as in process, without a worker executing them;
 * - price overrides (`model.prices`) price a Codex run on the worker (real Codex CLI, scripted
 *   model server; the cost is computed by hand from the stored token counts and the price);
 * - `--base-image` mappings reach the workers (a Harbor task FROM an image this machine does not
 *   have, in the container sandbox, needs Podman).
 *
 * And the attacks: a job naming a variant folder on the worker without knowing its digest is
 * refused and learns nothing about it; `agentEnv` (which may hold keys) is refused.
 *
 * Before: the workers dropped variants (their arm failed), stored no fingerprints, ignored
 * `reuse`, priced Codex at the list price, and built task images FROM the original image.
 */
import { existsSync } from "node:fs";
import { appendFile, mkdir, mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findAgentCli } from "../src/agents/cli-locate.js";
import { importHarbor } from "../src/bench/index.js";
import { runSuiteOnQueue } from "../src/bench/queue/coordinator.js";
import {
  jobDataFor,
  type QueueJobData,
  queueNameOf,
  rateLimitGroupOf,
} from "../src/bench/queue/jobs.js";
import { runQueueWorker } from "../src/bench/queue/worker.js";
import type { RunEvent } from "../src/bench/run/events.js";
import type { RunSuiteOptions, RunSuiteSummary } from "../src/bench/run/options.js";
import { Predictions } from "../src/bench/run/predictions.js";
import { runSuite } from "../src/bench/run/runner.js";
import { ResultsStore, type RunResult } from "../src/bench/store/results.js";
import type { Configuration } from "../src/bench/suite/schema.js";
import type { SuiteRequirement, SuiteSkill } from "../src/bench/suite/types.js";
import { treeDigest } from "../src/env/index.js";
import { findOnPath } from "../src/env/sandbox/bubblewrap.js";
import { type ScriptedServer, startScriptedServer } from "../src/model/scripted/server.js";
import { runInProcess, writeTree } from "./support/cli.js";
import { waitFor } from "./support/processes.js";
import { type RedisServer, startRedisServer } from "./support/redis.js";
import { availableContainerSandbox } from "./support/sandboxes.js";
import { newFilePatch, removeRunRoot, writeReplaySuite, writeTinySuite } from "./support/suites.js";

const hasRedisServer = findOnPath("redis-server") !== null;
const codex = await findAgentCli("codex");
const containers = existsSync("/run/podman/podman.sock")
  ? await availableContainerSandbox()
  : undefined;

const WORKER_KEY = "sk-queue-parity-worker-key-5b0e9c";
let root: string;
let suite: string;
let predictions: string;
let cacheDir: string;
let variantFolder: string;
let url: string;
let redisServer: RedisServer | undefined;
let server: ScriptedServer | undefined;
const stopWorker = new AbortController();
let worker: Promise<unknown> | undefined;
/** Every job the worker finished: its run id, key and how. */
const done: Array<{ runId: string; key: string; outcome: string }> = [];

/** Token counts of every scripted Codex reply. */
const USAGE = { inputTokens: 100_000, cachedInputTokens: 0, outputTokens: 10_000 };

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "bench-queue-parity-"));
  cacheDir = join(root, "cache");
  ({ suite, predictions } = await writeReplaySuite(root, {
    requirements: 2,
    verifierSleepSeconds: 0,
  }));
  // The variant v2 writes good for r1 and bad for r2: 2 of 2 and 1 of 2 checks.
  await appendFile(
    predictions,
    `${["good", "bad"]
      .map((text, index) =>
        JSON.stringify({
          skill: "alpha",
          requirement: `r${index + 1}`,
          arm: "variant:v2",
          patch: newFilePatch(`out/r${index + 1}.txt`, text),
        }),
      )
      .join("\n")}\n`,
  );
  variantFolder = join(root, "alpha-v2");
  await writeTree(variantFolder, {
    "SKILL.md":
      "---\nname: alpha-v2\ndescription: A second version of alpha. Use when a task asks for a result file.\n---\n\n# Alpha v2\n\nWrite `good`, mostly.\n",
  });
  if (!hasRedisServer) return;
  await mkdir(join(root, "redis"));
  redisServer = await startRedisServer(join(root, "redis"));
  url = `redis://127.0.0.1:${redisServer.port}/0`;
  if (codex !== undefined) {
    server = await startScriptedServer({
      script: {
        rules: [
          { match: { toolResult: "[\\s\\S]*" }, reply: { text: "Done.", usage: USAGE } },
          {
            match: { lastUserMessage: "result-r(\\d)\\.txt" },
            reply: {
              toolCalls: [{ name: "exec_command", input: { cmd: "echo good > result-r1.txt" } }],
              usage: USAGE,
            },
          },
        ],
        fallback: { text: "Nothing to do.", usage: USAGE },
      },
    });
  }
  // One worker for every test, as a machine would run it: its own environment and key.
  worker = runQueueWorker({
    queue: url,
    allowUnsafe: true,
    cacheDir,
    registryPollMs: 100,
    lockDurationMs: 10_000,
    env: {
      ...process.env,
      OPENAI_API_KEY: WORKER_KEY,
      ...(server === undefined ? {} : { OPENAI_BASE_URL: `${server.url}/v1` }),
    },
    signal: stopWorker.signal,
    onJobDone: (data, outcome) =>
      done.push({
        runId: data.runId,
        key: `${data.key.requirement}/${data.key.arm}`,
        outcome,
      }),
  });
});

afterAll(async () => {
  stopWorker.abort();
  await worker;
  await server?.close();
  await redisServer?.stop();
  await removeRunRoot(root);
});

/** What a result says about the run, without the times and ids of this execution. */
function comparable(result: RunResult) {
  return {
    key: `${result.config}/${result.skill}/${result.requirement}/${result.arm}#${result.repeat}`,
    status: result.status,
    passRatio: result.passRatio,
    flags: result.flags,
    checks: result.checks.map((check) => `${check.name}:${check.status}`),
    costUsd: result.usage.costUsd,
    fingerprint: result.fingerprint,
    provenance: result.provenance,
  };
}

function stored(runDir: string): ReturnType<typeof comparable>[] {
  const store = ResultsStore.openReadOnly(runDir);
  try {
    return store
      .results()
      .map(comparable)
      .sort((left, right) => left.key.localeCompare(right.key));
  } finally {
    store.close();
  }
}

async function runIdOf(runDir: string): Promise<string> {
  return (JSON.parse(await readFile(join(runDir, "queue.json"), "utf8")) as { runId: string })
    .runId;
}

const replayOptions = () => ({
  suite,
  predictions,
  sandbox: "unsafe" as const,
  cacheDir,
  // These compare what is executed; the gate has a case of its own below.
  check: false,
});

type SharedOptions = Omit<RunSuiteOptions, "sandbox" | "harnessFor"> & {
  readonly sandbox?: "unsafe" | "container" | "local";
};

/** A scheduler under test: how to run a suite with it, from the library and from the CLI. */
interface SchedulerCase {
  readonly name: "in-process" | "queue";
  readonly needsRedis: boolean;
  readonly run: (options: SharedOptions) => Promise<RunSuiteSummary>;
  readonly cliArguments: () => string[];
  /** The run ids of workers' jobs of a run directory (queue only): what workers executed. */
  readonly workerOutcomes?: (runDir: string) => Promise<string[]>;
}

const SCHEDULERS: readonly SchedulerCase[] = [
  {
    name: "in-process",
    needsRedis: false,
    run: (options) => runSuite(options),
    cliArguments: () => [],
  },
  {
    name: "queue",
    needsRedis: true,
    run: (options) => runSuiteOnQueue({ ...options, queue: url, pollIntervalMs: 100 }),
    cliArguments: () => ["--queue", url, "--poll-interval", "100"],
    workerOutcomes: async (runDir) => {
      const runId = await runIdOf(runDir);
      return done
        .filter((job) => job.runId === runId)
        .map((job) => `${job.key}:${job.outcome}`)
        .sort();
    },
  },
];

/** The run-stored events of one run, as `requirement/arm:how` (how: scored or reused). */
function storedEvents(): { onEvent: (event: RunEvent) => void; list: () => string[] } {
  const events: string[] = [];
  return {
    onEvent: (event) => {
      if (event.type === "run-stored") {
        events.push(
          `${event.key.requirement}/${event.key.arm}:${event.reused ? "reused" : "scored"}`,
        );
      }
    },
    list: () => [...events].sort(),
  };
}

/** The suite of the gate case: r1's verifier weak (1 of 2 checks pass untouched), r2's broken. */
async function writeGateSuite(gateRoot: string) {
  await mkdir(gateRoot, { recursive: true });
  const written = await writeReplaySuite(gateRoot, { requirements: 2, verifierSleepSeconds: 0 });
  const requirements = join(written.suite, "skills", "alpha", "requirements");
  await writeTree(join(requirements, "r1", "verifier"), {
    "check.sh":
      'echo \'<testsuite name="r1"><testcase classname="r" name="always"/>\' > junit.xml\nif [ "$(cat "$SKILLSMITH_WORKSPACE/out/r1.txt" 2>/dev/null)" = good ]; then echo \'<testcase classname="r" name="good"/>\'; else echo \'<testcase classname="r" name="good"><failure message="no"/></testcase>\'; fi >> junit.xml\necho \'</testsuite>\' >> junit.xml\n',
  });
  await writeTree(join(requirements, "r2", "verifier"), {
    "check.sh": "echo 'this verifier is broken' >&2\nexit 3\n",
  });
  return written;
}

let gateSuite: ReturnType<typeof writeGateSuite> | undefined;
/** The `--reuse` source of both schedulers: the in-process run of the first case. */
const SOURCE = () => join(root, "in-process", "single");

describe.each(SCHEDULERS)("one run session, the $name scheduler", (scheduler) => {
  const skip = scheduler.needsRedis && !hasRedisServer;
  const dir = (name: string) => join(root, scheduler.name, name);

  it.skipIf(skip)(
    "stores the expected results, fingerprints included, with a command-line variant",
    async () => {
      const variants = [{ name: "v2", folder: variantFolder }];
      const events = storedEvents();
      const summary = await scheduler.run({
        ...replayOptions(),
        runDir: dir("single"),
        variants,
        onEvent: events.onEvent,
      });
      expect(summary.failed).toEqual([]);
      expect(summary.executed).toBe(6);
      const rows = stored(dir("single"));
      // By hand: with writes good (1), without good for r1 (1) and bad for r2 (½), v2 likewise.
      expect(rows.map((row) => `${row.key}=${row.passRatio}`)).toEqual([
        "replay/alpha/r1/variant:v2#1=1",
        "replay/alpha/r1/with#1=1",
        "replay/alpha/r1/without#1=1",
        "replay/alpha/r2/variant:v2#1=0.5",
        "replay/alpha/r2/with#1=1",
        "replay/alpha/r2/without#1=0.5",
      ]);
      for (const row of rows) expect(row.fingerprint?.digest).toMatch(/^[a-f0-9]{64}$/);
      // Every stored run was announced once, as executed.
      expect(events.list()).toEqual(
        ["r1", "r2"]
          .flatMap((r) => ["variant:v2", "with", "without"].map((a) => `${r}/${a}:scored`))
          .sort(),
      );
    },
  );

  it.skipIf(skip)(
    "runs the gate first: a broken verifier's runs are stored unmeasured and never executed, a weak one's flagged once; --no-check re-decides them",
    async () => {
      // One suite for both schedulers (its repository's commit is in every fingerprint).
      gateSuite ??= writeGateSuite(join(root, "gate-suite"));
      const written = await gateSuite;
      const options = {
        suite: written.suite,
        predictions: written.predictions,
        sandbox: "unsafe" as const,
        cacheDir,
      };
      const runDir = join(dir("gate"), "run");
      const flagged: string[] = [];
      const summary = await scheduler.run({
        ...options,
        runDir,
        onEvent: (event) => {
          if (event.type === "run-flagged") {
            flagged.push(`${event.key.requirement}/${event.key.arm}=${event.flags.join(",")}`);
          }
        },
      });
      expect(summary.failed).toEqual([]);
      expect(summary.unmeasured).toBe(2);
      expect(summary.executed).toBe(2);
      expect(
        summary.check?.requirements.map((entry) => `${entry.requirement}:${entry.status}`),
      ).toEqual(["r1:weak", "r2:broken"]);
      const rows = stored(runDir);
      expect(rows.map((row) => `${row.key}=${row.flags.join(",")}`)).toEqual([
        "replay/alpha/r1/with#1=weak-verifier",
        "replay/alpha/r1/without#1=weak-verifier",
        "replay/alpha/r2/with#1=broken-verifier",
        "replay/alpha/r2/without#1=broken-verifier",
      ]);
      // Every flagged run is announced as flagged.
      expect(flagged.sort()).toEqual([
        "r1/with=weak-verifier",
        "r1/without=weak-verifier",
        "r2/with=broken-verifier",
        "r2/without=broken-verifier",
      ]);
      // Workers executed r1's two runs and nothing of r2.
      if (scheduler.workerOutcomes !== undefined) {
        expect(await scheduler.workerOutcomes(runDir)).toEqual([
          "r1/with:scored",
          "r1/without:scored",
        ]);
      }
      // The same run directory again without the gate: the runs it stored unmeasured are decided
      // again by running them, as the gate re-decides them on every invocation (a machine fixed
      // since, a flaky check); a changed suite would need a new run directory.
      const again = await scheduler.run({ ...options, runDir, check: false });
      expect(again.failed).toEqual([]);
      expect(again.executed).toBe(2);
      const rerun = stored(runDir).filter((row) => row.key.includes("/r2/"));
      expect(rerun.map((row) => row.key)).toEqual([
        "replay/alpha/r2/with#1",
        "replay/alpha/r2/without#1",
      ]);
      // Run for real this time: scored by the verifier (which reports no check), not by the gate.
      for (const row of rerun) expect(row.flags).not.toContain("broken-verifier");
    },
  );

  it.skipIf(skip)(
    "--reuse copies the unassisted runs of a source with their provenance, none executed",
    async () => {
      // One source for both schedulers (the in-process run of the first case), so their rows,
      // provenance included, compare equal below.
      const source = SOURCE();
      const runDir = dir("reuse");
      const events = storedEvents();
      const summary = await scheduler.run({
        ...replayOptions(),
        runDir,
        reuse: [source],
        onEvent: events.onEvent,
      });
      expect(summary.failed).toEqual([]);
      expect(summary.reused).toBe(2);
      expect(summary.executed).toBe(4);
      const rows = stored(runDir);
      expect(rows.filter((row) => row.provenance !== undefined).map((row) => row.key)).toEqual([
        "replay/alpha/r1/without#1",
        "replay/alpha/r2/without#1",
      ]);
      expect(rows.find((row) => row.key.endsWith("r1/without#1"))?.provenance).toEqual({
        kind: "reused",
        runDir: source,
        key: "replay/alpha/r1/without#1",
      });
      expect(events.list()).toEqual([
        "r1/with:scored",
        "r1/without:reused",
        "r2/with:scored",
        "r2/without:reused",
      ]);
      // On the queue, the worker answered the unassisted jobs with their fingerprint only.
      if (scheduler.workerOutcomes !== undefined) {
        expect(await scheduler.workerOutcomes(runDir)).toEqual([
          "r1/with:scored",
          "r1/without:reusable",
          "r2/with:scored",
          "r2/without:reusable",
        ]);
      }
    },
  );

  it.skipIf(skip)(
    "bench run takes --variant and --reuse (the queue refused both once)",
    async () => {
      const cli = await runInProcess(
        [
          "bench",
          "run",
          suite,
          "--predictions",
          predictions,
          "--out",
          dir("cli"),
          "--sandbox",
          "unsafe",
          "--no-check",
          ...scheduler.cliArguments(),
          "--variant",
          `v2=${variantFolder}`,
          "--reuse",
          SOURCE(),
          "--json",
        ],
        { cwd: root, env: { ...process.env, SKILLSMITH_CACHE_DIR: cacheDir } },
      );
      expect(cli.code, cli.stderr).toBe(0);
      const run = (JSON.parse(cli.stdout) as { run: { executed: number; reused: number } }).run;
      // 2 requirements × 3 arms; both unassisted runs copied from the first case's directory.
      expect(run).toMatchObject({ executed: 6, reused: 2 });
      const rows = stored(dir("cli"));
      expect(rows.filter((row) => row.provenance !== undefined).map((row) => row.key)).toEqual([
        "replay/alpha/r1/without#1",
        "replay/alpha/r2/without#1",
      ]);
    },
  );
});

describe.skipIf(!hasRedisServer)(
  "the two schedulers store the same rows (needs redis-server)",
  () => {
    const both = (name: string) => SCHEDULERS.map((scheduler) => join(root, scheduler.name, name));

    // Stored-unmeasured runs (the gate case) have no fingerprint in either; the rest are alike.
    it.each(["gate/run", "single", "reuse", "cli"])("row by row: %s", (name) => {
      const [inProcess = "", queued = ""] = both(name);
      expect(stored(queued)).toEqual(stored(inProcess));
    });

    it("a run directory of either scheduler is a --reuse source for the other", async () => {
      const [inProcess = "", queued = ""] = both("single");
      const fromQueue = await runSuite({
        ...replayOptions(),
        runDir: join(root, "reuse-from-queue"),
        reuse: [queued],
      });
      expect(fromQueue.reused).toBe(2);
      const fromInProcess = await runSuiteOnQueue({
        ...replayOptions(),
        runDir: join(root, "reuse-from-in-process"),
        reuse: [inProcess],
        queue: url,
        pollIntervalMs: 100,
      });
      expect(fromInProcess.failed).toEqual([]);
      expect(fromInProcess.reused).toBe(2);
    });
  },
);

describe.skipIf(!hasRedisServer)(
  "what only the queue scheduler carries (needs redis-server)",
  () => {
    it("a worker with a key and no base URL of its own sends it to a job's base URL only when told to accept it", async () => {
      const keyRoot = join(root, "key-destination");
      await mkdir(keyRoot);
      const written = await writeReplaySuite(keyRoot, { requirements: 1, verifierSleepSeconds: 0 });
      // The builtin agent on an Anthropic model: its key is the worker's ANTHROPIC_API_KEY.
      await writeFile(
        join(written.suite, "suite.yaml"),
        "format: skillsmith-suite/1\nname: tiny\nconfigurations:\n  - id: builtin\n    agent: builtin\n    model: anthropic:claude-haiku-4-5\n    limits: { timeoutSeconds: 30 }\n",
      );
      // Whoever wrote the job runs this endpoint and would collect the key.
      const collector = await startScriptedServer({ script: { fallback: { text: "Done." } } });
      const prefix = "skillsmith-key-test";
      let runs = 0;
      const runWith = async (
        acceptBaseUrls: string[],
        keys: Record<string, string> = { ANTHROPIC_API_KEY: WORKER_KEY, ANTHROPIC_BASE_URL: "" },
        withEndpoint = true,
      ) => {
        runs += 1;
        const stop = new AbortController();
        const keyWorker = runQueueWorker({
          queue: url,
          prefix,
          allowUnsafe: true,
          cacheDir,
          registryPollMs: 100,
          env: { ...process.env, ...keys },
          acceptBaseUrls,
          signal: stop.signal,
        });
        try {
          return await runSuiteOnQueue({
            suite: written.suite,
            runDir: join(keyRoot, `run-${runs}`),
            sandbox: "unsafe",
            cacheDir,
            check: false,
            queue: url,
            prefix,
            pollIntervalMs: 100,
            jobAttempts: 1,
            ...(withEndpoint ? { modelEndpoint: { baseUrl: `${collector.url}/v1` } } : {}),
          });
        } finally {
          stop.abort();
          await keyWorker;
        }
      };
      try {
        const refused = await runWith([]);
        expect(refused.failed.map((failure) => failure.error)).toEqual([
          expect.stringMatching(/does not accept, and the run would send it this worker's API key/),
          expect.stringMatching(/does not accept/),
        ]);
        expect(collector.requests).toHaveLength(0);
        // The same through the configuration's model spec, with no endpoint in the job at all.
        await writeFile(
          join(written.suite, "suite.yaml"),
          `format: skillsmith-suite/1\nname: tiny\nconfigurations:\n  - id: builtin\n    agent: builtin\n    model: "openai-compatible:m@${collector.url}/v1"\n    limits: { timeoutSeconds: 30 }\n`,
        );
        const bySpec = await runWith(
          [],
          { OPENAI_API_KEY: WORKER_KEY, OPENAI_BASE_URL: "" },
          false,
        );
        expect(bySpec.failed.map((failure) => failure.error)).toEqual([
          expect.stringMatching(/its model spec names a model base URL .* does not accept/),
          expect.stringMatching(/its model spec/),
        ]);
        expect(collector.requests).toHaveLength(0);
        await writeFile(
          join(written.suite, "suite.yaml"),
          "format: skillsmith-suite/1\nname: tiny\nconfigurations:\n  - id: builtin\n    agent: builtin\n    model: anthropic:claude-haiku-4-5\n    limits: { timeoutSeconds: 30 }\n",
        );
        const accepted = await runWith([`${collector.url}/v1/`]);
        expect(accepted.failed).toEqual([]);
        expect(accepted.executed).toBe(2);
        expect(collector.requests.length).toBeGreaterThan(0);
      } finally {
        await collector.close();
      }
    });

    it("refuses, before anything is enqueued, an agent environment (it may hold keys)", async () => {
      await expect(
        runSuiteOnQueue({
          ...replayOptions(),
          runDir: join(root, "agent-env"),
          agentEnv: { OPENAI_API_KEY: "sk-agent-env-secret" },
          queue: url,
        }),
      ).rejects.toMatchObject({ code: "bench.queue-agent-env" });
      expect(existsSync(join(root, "agent-env", "queue.json"))).toBe(false);
    });

    it("a job naming a variant folder without its digest is refused, and learns nothing of it", async () => {
      // A skill folder on the worker's disk that no coordinator offered: a crafted job names it.
      const privateFolder = join(root, "private", "alpha-private");
      await writeTree(privateFolder, {
        "SKILL.md":
          "---\nname: alpha-private\ndescription: Private notes of this machine. Use never.\n---\n\nprivate-notes-7f3a\n",
      });
      const actual = await treeDigest(privateFolder);
      const configuration: Configuration = {
        id: "replay",
        agent: "replay",
        limits: { timeoutSeconds: 30 },
      };
      const data: QueueJobData = jobDataFor(
        {
          key: {
            config: "replay",
            skill: "alpha",
            requirement: "r1",
            arm: "variant:stolen",
            repeat: 1,
          },
          configuration,
          skill: {} as SuiteSkill,
          requirement: {} as SuiteRequirement,
        },
        {
          runId: "ab".repeat(12),
          suite: { path: suite, digest: await treeDigest(suite) },
          predictions: { path: predictions, digest: (await Predictions.read(predictions)).digest },
          sandbox: "unsafe",
          maxAttempts: 1,
          priorAttempts: 0,
          variants: [
            { skill: "alpha", name: "stolen", folder: privateFolder, digest: "0".repeat(64) },
          ],
        },
      );
      const redis = new Redis(url);
      const queue = new Queue(queueNameOf(rateLimitGroupOf(configuration)), {
        connection: redis,
        prefix: "skillsmith",
      });
      try {
        const job = await queue.add("run", data, { jobId: `${data.runId}/stolen`, attempts: 1 });
        const reason = await waitFor("the crafted job to fail", async () => {
          const state = await job.getState();
          if (state !== "failed") return undefined;
          return (await queue.getJob(job.id ?? ""))?.failedReason ?? "";
        });
        expect(reason).toMatch(/variant stolen: .* is missing or differs from the coordinator's/);
        // Neither the folder's content nor its digest reaches Redis, and nothing ran.
        expect(reason).not.toContain(actual.slice(0, 8));
        expect(reason).not.toContain("private-notes");
        expect(done.some((entry) => entry.runId === data.runId)).toBe(false);
      } finally {
        await queue.close();
        redis.disconnect();
      }
    });

    it.skipIf(codex === undefined)(
      "prices a Codex run on the worker with the coordinator's model.prices",
      async () => {
        const codexSuite = await writeTinySuite(await mkdtemp(join(root, "codex-")), {
          suiteYaml:
            "format: skillsmith-suite/1\nname: codex-prices\nconfigurations:\n  - id: codex\n    agent: codex\n    model: openai:gpt-5\n    limits: { timeoutSeconds: 120 }\n",
          skillMarkdown:
            "---\nname: alpha\ndescription: Writes result files. Use when a task asks for a result file.\n---\n\n# Alpha\n\nWrite good.\n",
          checkScript: (k) =>
            `{\n  echo '<testsuite name="r">'\n  if [ "$(cat "$SKILLSMITH_WORKSPACE/result-r${k}.txt" 2>/dev/null)" = good ]; then echo '<testcase classname="r" name="good"/>'; else echo '<testcase classname="r" name="good"><failure message="not good"/></testcase>'; fi\n  echo '</testsuite>'\n} > junit.xml\n`,
        });
        // $2 / $20 per million tokens instead of gpt-5's list price ($1.25 / $10).
        const prices = { "openai:gpt-5": { input: 2, output: 20 } };
        const queued = join(root, "codex-queued");
        const summary = await runSuiteOnQueue({
          suite: codexSuite,
          runDir: queued,
          sandbox: "unsafe",
          cacheDir,
          check: false,
          selection: { requirements: ["r1"] },
          prices,
          queue: url,
          pollIntervalMs: 100,
        });
        expect(summary.failed).toEqual([]);
        const store = ResultsStore.openReadOnly(queued);
        const results = store.results();
        store.close();
        expect(results).toHaveLength(2);
        for (const result of results) {
          expect(result.status).toBe("completed");
          const { inputTokens, outputTokens } = result.usage;
          expect(inputTokens).toBeGreaterThanOrEqual(USAGE.inputTokens);
          // By hand: the override's price of the tokens the run reports.
          expect(result.usage.costUsd).toBeCloseTo(
            (inputTokens / 1e6) * 2 + (outputTokens / 1e6) * 20,
            10,
          );
        }
        expect(summary.costUsd).toBeCloseTo(
          results.reduce(
            (sum, result) =>
              sum + (result.usage.inputTokens / 1e6) * 2 + (result.usage.outputTokens / 1e6) * 20,
            0,
          ),
          10,
        );
      },
      180_000,
    );
  },
);

describe.skipIf(!hasRedisServer || containers === undefined)(
  "--base-image with either scheduler (needs redis-server and Podman with skillsmith's base image)",
  () => {
    it("builds a task FROM an image this machine lacks through the mapping, in process and on the queue", async () => {
      const task = join(root, "tasks", "greet");
      await writeTree(task, {
        "instruction.md": "Write `hello.txt` in the working directory: Hello, world.\n",
        "task.toml": [
          'version = "1.0"',
          "[verifier]",
          "timeout_sec = 60.0",
          "[agent]",
          "timeout_sec = 60.0",
          "[environment]",
          "build_timeout_sec = 120.0",
          "allow_internet = false",
          "",
        ].join("\n"),
        // Not on this machine and not pullable here: only the mapping makes it buildable.
        "environment/Dockerfile":
          "FROM ubuntu:24.04\nWORKDIR /app\nCOPY skills /root/.claude/skills\n",
        "environment/skills/greeting/SKILL.md":
          "---\nname: greeting\ndescription: How greetings are written here; use when asked for a greeting file.\n---\n\nWrite Hello, world.\n",
        "tests/test.sh":
          '#!/bin/bash\nmkdir -p /logs/verifier\nif [ "$(cat /app/hello.txt 2>/dev/null)" = "Hello, world" ]; then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n',
        "solution/solve.sh": '#!/bin/bash\nprintf "Hello, world" > /app/hello.txt\n',
      });
      const harborSuite = join(root, "harbor-suite");
      await importHarbor([join(root, "tasks")], { out: harborSuite });
      const baseImages = { "ubuntu:24.04": "localhost/skillsmith-base:bookworm" };
      const common = {
        suite: harborSuite,
        cacheDir,
        configs: ["oracle"],
        check: false,
        baseImages,
      };
      const reference = join(root, "harbor-single");
      await runSuite({ ...common, runDir: reference, sandbox: "container" });
      const queued = join(root, "harbor-queued");
      const summary = await runSuiteOnQueue({
        ...common,
        runDir: queued,
        sandbox: "container",
        queue: url,
        pollIntervalMs: 200,
      });
      expect(summary.failed).toEqual([]);
      const rows = stored(queued);
      // By hand: the oracle's solve.sh writes the greeting in both arms: reward 1.
      expect(rows.map((row) => `${row.key}=${row.passRatio}`)).toEqual([
        "oracle/greet/greet/with#1=1",
        "oracle/greet/greet/without#1=1",
      ]);
      expect(rows).toEqual(stored(reference));
    }, 240_000);
  },
);
