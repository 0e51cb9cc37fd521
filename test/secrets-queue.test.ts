/**
 * Secrets never reach Redis: a `bench run --queue` coordinator and a worker (both in-process,
 * on a real `redis-server` the test starts) run a replay suite while a MONITOR connection
 * records every command Redis receives — job data, return values, failure reasons and stack
 * traces included, even those deleted a moment later. Three keys flow towards it:
 *
 * - the coordinator's model endpoint has a base URL that carries its key in the query (as
 *   some gateways want it): the base URL travels in the job data;
 * - the worker's environment holds a key that the run's content quotes (the replayed patch
 *   writes it into the file the verifier reads, and the failing check's message prints it), so
 *   it is in the result the worker returns;
 * - a job that names a suite under a folder named after the worker's key fails on the worker,
 *   whose error message (BullMQ's `failedReason`, and the stack) names that path.
 *
 * None of them may appear in the recorded traffic, and the redaction marker must (so each did
 * reach a command and was removed). Before: the job data held the base URL as given, the return
 * value held the check message with the worker's key (the coordinator redacted it only when
 * storing), and the failure reason named the path.
 */
import { randomBytes } from "node:crypto";
import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runSuiteOnQueue } from "../src/bench/queue/coordinator.js";
import { QUEUE_JOB_FORMAT, queueNameOf, rateLimitGroupOf } from "../src/bench/queue/jobs.js";
import { runQueueWorker } from "../src/bench/queue/worker.js";
import { ResultsStore } from "../src/bench/store/results.js";
import { findOnPath } from "../src/env/sandbox/bubblewrap.js";
import { redactionMarker } from "../src/model/redact.js";
import { waitFor } from "./support/processes.js";
import { type RedisServer, startRedisServer } from "./support/redis.js";
import {
  newFilePatch,
  removeRunRoot,
  tinyRepository,
  writeAlphaSkill,
  writeRequirement,
} from "./support/suites.js";

const hasRedisServer = findOnPath("redis-server") !== null;
const unique = randomBytes(6).toString("hex");
const COORDINATOR_KEY = `gateway-${unique}-51d0c3b2`;
const WORKER_KEY = `worker-${unique}-8e4f2a17`;

let root: string;
let redisServer: RedisServer | undefined;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "secrets-queue-"));
  if (hasRedisServer) {
    await mkdir(join(root, "redis"));
    redisServer = await startRedisServer(join(root, "redis"));
  }
});

afterAll(async () => {
  await redisServer?.stop();
  await removeRunRoot(root);
});

/** One requirement; its check prints what the file holds in the failure message. */
async function writeSuite(): Promise<{ suite: string; predictions: string }> {
  const { repo, commit } = await tinyRepository(root);
  const suite = join(root, "suite");
  const skill = await writeAlphaSkill(suite, {
    suiteYaml:
      "format: skillsmith-suite/1\nname: secrets-queue\nconfigurations:\n  - id: replay\n    agent: replay\n    limits: { timeoutSeconds: 30 }\n",
    skillYaml: `repository:\n  path: ${repo}\n  commit: ${commit}\n  name: tiny\n`,
    skillMarkdown:
      "---\nname: alpha\ndescription: Writes result files. Use when a task asks for a result file.\n---\n\n# Alpha\n\nWrite good.\n",
  });
  await writeRequirement(skill, "r1", {
    requirementMarkdown:
      "## Requirement\n\nWrite the word good into out.txt.\n\n## File Operations\n\n- `out.txt`\n\n## Acceptance Criteria\n\n- it says good\n",
    checkScript: `seen=$(tr -d '<>&"' < "$SKILLSMITH_WORKSPACE/out.txt")
{
  echo '<testsuite name="r">'
  if [ "$seen" = good ]; then echo '<testcase classname="r" name="good"/>'; else echo "<testcase classname=\\"r\\" name=\\"good\\"><failure message=\\"saw $seen\\"/></testcase>"; fi
  echo '</testsuite>'
} > junit.xml
`,
    verifierYaml: "command: sh check.sh\nfiles: [check.sh]\njunit: junit.xml\ntimeoutSeconds: 30\n",
  });
  const predictions = join(root, "predictions.jsonl");
  await writeFile(
    predictions,
    `${[
      { skill: "alpha", requirement: "r1", arm: "without", patch: newFilePatch("out.txt", "bad") },
      {
        skill: "alpha",
        requirement: "r1",
        arm: "with",
        patch: newFilePatch("out.txt", `key ${WORKER_KEY}`),
      },
    ]
      .map((line) => JSON.stringify(line))
      .join("\n")}\n`,
  );
  return { suite, predictions };
}

describe("what goes through Redis", () => {
  it.skipIf(!hasRedisServer)(
    "carries no key in job data, return values or failure reasons (needs redis-server)",
    async () => {
      const port = redisServer?.port as number;
      const url = `redis://127.0.0.1:${port}/5`;
      /** Every command Redis received, by the client address that sent it. */
      const traffic: { source: string; command: string }[] = [];
      const monitor = await new Redis({ host: "127.0.0.1", port }).monitor();
      monitor.on("monitor", (_time: string, args: string[], source: string) =>
        traffic.push({ source, command: args.join(" ") }),
      );
      /**
       * The stray job is planted by the test itself, its data holding the key: the commands that
       * carry that data (sent by the test's connection, or run by BullMQ's script for it) are
       * the test's, not skillsmith's.
       */
      let plantingSource: string | undefined;
      const plantedPath = join(root, WORKER_KEY, "suite");
      const plantedData = `"path":${JSON.stringify(plantedPath)}`;

      const { suite, predictions } = await writeSuite();
      const cacheDir = join(root, "cache");
      const stop = new AbortController();
      const workerLog: string[] = [];
      const worker = runQueueWorker({
        queue: url,
        allowUnsafe: true,
        cacheDir,
        registryPollMs: 100,
        env: { ...process.env, SKILLSMITH_TEST_WORKER_TOKEN: WORKER_KEY },
        signal: stop.signal,
        onLog: (line) => workerLog.push(line),
      });
      const runDir = join(root, "run");
      let failedReason: string | undefined;
      try {
        const summary = await runSuiteOnQueue({
          suite,
          runDir,
          predictions,
          sandbox: "unsafe",
          cacheDir,
          queue: url,
          pollIntervalMs: 100,
          modelEndpoint: {
            baseUrl: `http://127.0.0.1:9/v1?code=${COORDINATOR_KEY}`,
            apiKey: COORDINATOR_KEY,
          },
        });
        expect(summary.failed, workerLog.join("\n")).toEqual([]);
        expect(summary.executed).toBe(2);

        // A job naming a path under a folder called like the worker's key fails on the worker.
        const group = rateLimitGroupOf({
          id: "replay",
          agent: "replay",
          limits: { timeoutSeconds: 30 },
        });
        const connection = new Redis({ host: "127.0.0.1", port, db: 5 });
        await connection.ping();
        plantingSource = `127.0.0.1:${connection.stream.localPort}`;
        const queue = new Queue(queueNameOf(group), { connection, prefix: "skillsmith" });
        try {
          const job = await queue.add(
            "run",
            {
              format: QUEUE_JOB_FORMAT,
              runId: "ab".repeat(8),
              suite: { path: plantedPath, digest: "x" },
              configuration: { id: "replay", agent: "replay", limits: { timeoutSeconds: 30 } },
              key: { config: "replay", skill: "alpha", requirement: "r1", arm: "with", repeat: 1 },
              sandbox: "unsafe",
              maxAttempts: 1,
              priorAttempts: 0,
            },
            { jobId: "stray-job", attempts: 1, removeOnFail: false },
          );
          await waitFor("the stray job to fail", async () =>
            (await queue.getJobState(job.id ?? "")) === "failed" ? true : undefined,
          );
          failedReason = (await queue.getJob(job.id ?? ""))?.failedReason;
        } finally {
          await queue.close();
          connection.disconnect();
        }
      } finally {
        stop.abort();
        await worker;
        monitor.disconnect();
      }

      // The attacks reached their targets: the stored check quotes the (redacted) file, and
      // the failure names the (redacted) folder.
      const store = ResultsStore.openReadOnly(runDir);
      const withArm = store.results().find((result) => result.arm === "with");
      store.close();
      expect(withArm?.checks[0]?.message).toBe(`saw key ${redactionMarker}`);
      expect(failedReason).toContain(join(root, redactionMarker, "suite"));

      expect(plantingSource).toBeDefined();
      const written = traffic
        .filter((each) => each.source !== plantingSource && !each.command.includes(plantedData))
        .map((each) => each.command);
      expect(written.length).toBeGreaterThan(0);
      for (const command of written)
        for (const key of [COORDINATOR_KEY, WORKER_KEY])
          expect(command.includes(key), `${key} in ${command.slice(0, 300)}`).toBe(false);
      // Each channel carried a redacted value: the job data, the return value, the failure.
      const commandsWithMarker = written.filter((command) => command.includes(redactionMarker));
      expect(
        commandsWithMarker.some((command) => command.includes(`code=${redactionMarker}`)),
      ).toBe(true);
      expect(
        commandsWithMarker.some((command) => command.includes(`saw key ${redactionMarker}`)),
      ).toBe(true);
      expect(commandsWithMarker.some((command) => command.includes("stray-job"))).toBe(true);
    },
  );
});
