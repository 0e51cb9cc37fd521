/**
 * The queue coordinator (`skillsmith bench run --queue`): plans a run exactly like the
 * in-process runner, enqueues every key without a stored result as a BullMQ job whose id is
 * the key (inside the run's namespace), and stores what workers return in the run's results
 * store as it arrives.
 *
 * Nothing is lost or counted twice across restarts: a job stays in Redis until its result is
 * committed to SQLite, and is removed only afterwards; a restarted coordinator first collects
 * whatever finished while it was away, then re-adds the keys still missing (BullMQ ignores an
 * id that is already queued, running or finished), so a key is never executed twice. A result
 * already in the store is never stored again.
 *
 * One file (a little over 400 lines): enqueueing, collecting and the restart rules above are one
 * protocol over the same queues and store; kept together so that protocol reads in one place.
 */
import { randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
// Types only: BullMQ loads when a queue run starts (~0.25 s of start-up for every other command).
import type { Job, Queue } from "bullmq";
import type { Redis } from "ioredis";
import { InternalError, UsageError } from "../../core/errors.js";
import { unlessMissing, writeFileAtomic } from "../../core/fs.js";
import { registerSecret } from "../../model/redact.js";
import { messageOf } from "../run/execute.js";
import type { ModelEndpoint } from "../run/model-endpoint.js";
import type { RunFailure, RunSuiteOptions, RunSuiteSummary, SandboxKind } from "../run/options.js";
import { openRunDirectory, type PlannedRun, planRun } from "../run/plan.js";
import { progressReporter } from "../run/progress.js";
import { storeRunResult } from "../run/store-result.js";
import { writeManifest } from "../store/manifest.js";
import { formatRunKey, type ResultsStore } from "../store/results.js";
import type { Configuration } from "../suite/schema.js";
import { createRedisClient, queueConnectionOf, type RedisConnectionOptions } from "./connection.js";
import {
  DEFAULT_QUEUE_PREFIX,
  jobDataFor,
  jobIdOf,
  jobIdPrefix,
  parseQueueResult,
  queueJobSchema,
  queueNameOf,
  type RateLimit,
  rateLimitGroupOf,
  registryKeys,
} from "./jobs.js";
import { onceAMinute, sleep } from "./worker.js";

export const QUEUE_RUN_FILE = "queue.json";

export interface QueueRunOptions extends Omit<RunSuiteOptions, "sandbox" | "harnessFor"> {
  /** `redis://…` / `rediss://…`, or parsed options. */
  readonly queue: string | RedisConnectionOptions;
  /** The sandbox kind workers use (default `local`, i.e. bubblewrap). */
  readonly sandbox?: SandboxKind;
  /** Per rate-limit group (`anthropic.claude-x`, see `rateLimitGroupOf`): runs started per window. */
  readonly rateLimits?: Readonly<Record<string, RateLimit>>;
  /** How often finished jobs are collected (default 1 s). */
  readonly pollIntervalMs?: number;
  /** BullMQ attempts of a job whose worker could not even start it (default 3). */
  readonly jobAttempts?: number;
  readonly prefix?: string;
  /** Reconnects and outages of the Redis connection. */
  readonly onConnectionEvent?: (message: string) => void;
}

/** The run's namespace in Redis, kept in the run directory so a restart finds its jobs. */
async function queueRunId(runDir: string): Promise<string> {
  const file = join(runDir, QUEUE_RUN_FILE);
  // Unreadable is not "no run yet": a new id would orphan the run's jobs in Redis.
  const text = await unlessMissing(file, readFile(file, "utf8"));
  if (text !== undefined) {
    const value = (() => {
      try {
        return JSON.parse(text) as { runId?: unknown };
      } catch {
        return undefined;
      }
    })();
    if (typeof value?.runId === "string" && /^[a-f0-9]{16,64}$/.test(value.runId)) {
      return value.runId;
    }
    throw new UsageError(
      "queue-run-file-invalid",
      `${file}: expected {"runId": "<hex>"} as written by bench run --queue; remove it to start a new queue namespace (results already stored are kept)`,
    );
  }
  const runId = randomBytes(12).toString("hex");
  await writeFileAtomic(
    file,
    `${JSON.stringify({ format: "skillsmith-queue-run/1", runId, createdAt: new Date().toISOString() }, null, 2)}\n`,
  );
  return runId;
}

/** Run every missing run of a suite on workers through Redis; see the module comment. */
export async function runSuiteOnQueue(options: QueueRunOptions): Promise<RunSuiteSummary> {
  const started = performance.now();
  const { connection, label } = queueConnectionOf(options.queue);
  const sandboxKind = options.sandbox ?? "local";
  const pollIntervalMs = options.pollIntervalMs ?? 1_000;
  const prefix = options.prefix ?? DEFAULT_QUEUE_PREFIX;
  const plan = await planRun(options);
  if (sandboxKind === "unsafe") {
    options.onWarning?.(
      "warning: workers will run agents and verifiers WITHOUT a sandbox (--sandbox unsafe), if started with --allow-unsafe: they can read and write anything the worker's user can",
    );
  }
  const { manifest, store, planned, pending, alreadyDone } = await openRunDirectory(
    plan,
    options,
    sandboxKind,
  );
  let client: Redis | undefined;
  const queues = new Map<string, Queue>();
  try {
    const runId = await queueRunId(plan.runDir);
    const suiteDigest = manifest.suite.digest;
    const { Queue } = await import("bullmq");
    client = await createRedisClient(connection, label, {
      ...(options.onConnectionEvent === undefined
        ? {}
        : { onConnectionEvent: options.onConnectionEvent }),
    });
    const redis = client;
    const registry = registryKeys(prefix);
    const warnOnce = onceAMinute((message) => options.onWarning?.(message));

    const groupOf = new Map<string, string>();
    for (const configuration of plan.configurations) {
      groupOf.set(configuration.id, rateLimitGroupOf(configuration));
    }
    const groups = [...new Set(groupOf.values())].sort();
    for (const [group, limit] of Object.entries(options.rateLimits ?? {})) {
      if (!groups.includes(group)) {
        options.onWarning?.(
          `warning: --rate-limit for ${group} matches no configuration of this run (groups: ${groups.join(", ")})`,
        );
      }
      await redis.hset(
        registry.limits,
        group,
        JSON.stringify({ max: limit.max, durationMs: limit.durationMs }),
      );
    }
    // Limits first: a worker reads a group's limit when it first sees the group.
    if (groups.length > 0) await redis.sadd(registry.groups, ...groups);
    for (const group of groups) {
      const queue = new Queue(queueNameOf(group), { connection: redis, prefix });
      queue.on("error", (error) => warnOnce(`queue ${group}: ${messageOf(error)}`));
      queues.set(group, queue);
    }
    const queueOf = (configuration: Configuration): Queue => {
      const queue = queues.get(groupOf.get(configuration.id) ?? "");
      if (queue === undefined)
        throw new InternalError("queue.no-queue", `no queue for configuration ${configuration.id}`);
      return queue;
    };

    const outstanding = new Map<string, PlannedRun>();
    for (const run of pending) outstanding.set(jobIdOf(runId, run.key), run);
    const seenAttempts = new Set(
      store
        .attempts()
        .map((attempt) => attemptIdentity(attempt, attempt.attempt, attempt.startedAt)),
    );
    const failed: RunFailure[] = [];
    let done = 0;
    let running = 0;
    let notScheduled = 0;
    let stoppedByBudget = false;
    const progress = progressReporter(options, store, () => {
      const finished = done + failed.length;
      const elapsed = performance.now() - started;
      const remaining = outstanding.size;
      const etaMs = finished === 0 ? undefined : (elapsed / finished) * remaining;
      return { total: pending.length, alreadyDone, done, running, failed: failed.length, etaMs };
    });

    const collect = async (job: Job): Promise<void> => {
      const id = job.id ?? "";
      const run = outstanding.get(id);
      const state = await job.getState();
      if (state !== "completed" && state !== "failed") return;
      if (run === undefined) {
        // A key of this run not planned by this invocation (another --config): leave it for
        // the invocation that plans it, unless its result is already stored.
        const data = queueJobSchema.safeParse(job.data as unknown);
        if (data.success && store.has(data.data.key)) await removeJob(job);
        return;
      }
      if (state === "failed") {
        failed.push({ key: run.key, attempts: job.attemptsMade, error: job.failedReason });
        outstanding.delete(id);
        await removeJob(job);
        progress({ ...run.key, status: "infra_error" });
        return;
      }
      const parsed = parseQueueResult(job.returnvalue);
      if (!parsed.ok) {
        failed.push({ key: run.key, attempts: job.attemptsMade, error: parsed.error });
        outstanding.delete(id);
        await removeJob(job);
        progress({ ...run.key, status: "infra_error" });
        return;
      }
      const value = parsed.value;
      recordInfraAttempts(store, run, value.infraAttempts, seenAttempts);
      if (value.outcome.kind === "failed") {
        failed.push({ key: run.key, attempts: value.outcome.attempts, error: value.outcome.error });
        outstanding.delete(id);
        await removeJob(job);
        progress({ ...run.key, status: "infra_error" });
        return;
      }
      const result = value.outcome.result;
      if (formatRunKey(result) !== formatRunKey(run.key)) {
        failed.push({
          key: run.key,
          attempts: job.attemptsMade,
          error: `the worker returned the result of ${formatRunKey(result)} for job ${id}`,
        });
        outstanding.delete(id);
        await removeJob(job);
        return;
      }
      // Committed before the job is removed: a crash in between leaves the job, which the next
      // sweep (or the restarted coordinator) finds and, the key being stored, only removes.
      if (!store.has(run.key)) {
        try {
          await storeRunResult(store, plan.runDir, { ...result, ...run.key });
        } catch (error) {
          // A malformed row from Redis must not stall the run: report it as this key's failure.
          failed.push({
            key: run.key,
            attempts: result.attempts,
            error: `the result of job ${id} could not be stored: ${messageOf(error)}`,
          });
          outstanding.delete(id);
          await removeJob(job);
          progress({ ...run.key, status: "infra_error" });
          return;
        }
        done += 1;
      }
      outstanding.delete(id);
      await removeJob(job);
      progress({ ...run.key, status: result.status, passRatio: result.passRatio });
    };

    const sweep = async (): Promise<void> => {
      const ownPrefix = jobIdPrefix(runId);
      let active = 0;
      for (const queue of queues.values()) {
        const activeIds = await queue.getRanges(["active"], 0, -1, true);
        active += activeIds.filter((id) => outstanding.has(id)).length;
      }
      const changed = active !== running;
      running = active;
      let collected = false;
      for (const queue of queues.values()) {
        const finished = await queue.getRanges(["completed", "failed"], 0, -1, true);
        for (const id of finished) {
          if (!id.startsWith(ownPrefix)) continue;
          const job = await queue.getJob(id);
          if (job !== undefined) {
            await collect(job as Job);
            collected = true;
          }
        }
      }
      if (changed && !collected) progress();
    };

    const budgetReached = () =>
      options.budgetUsd !== undefined && store.totalCostUsd() >= options.budgetUsd;

    /** Take back every job of this run no worker has started; running ones finish. */
    const withdrawWaiting = async (): Promise<void> => {
      for (const [id, run] of [...outstanding]) {
        const job = await queueOf(run.configuration).getJob(id);
        if (job === undefined) {
          outstanding.delete(id);
          notScheduled += 1;
          continue;
        }
        const state = await job.getState();
        if (state === "waiting" || state === "delayed" || state === "prioritized") {
          const removed = await job
            .remove()
            .then(() => true)
            .catch(() => false);
          if (removed) {
            outstanding.delete(id);
            notScheduled += 1;
          }
        }
      }
    };

    progress();
    // What finished while no coordinator was watching comes first.
    await sweep();
    if (budgetReached()) {
      stoppedByBudget = outstanding.size > 0;
      await withdrawWaiting();
    } else {
      const endpointOf = (configuration: Configuration): ModelEndpoint | undefined => {
        const endpoint = options.modelEndpoint;
        return typeof endpoint === "function" ? endpoint(configuration) : endpoint;
      };
      const byQueue = new Map<Queue, Array<Parameters<Queue["addBulk"]>[0][number]>>();
      for (const [id, run] of outstanding) {
        const queue = queueOf(run.configuration);
        const endpoint = endpointOf(run.configuration);
        // The key itself stays here; registered, it cannot reach Redis inside another field.
        registerSecret(endpoint?.apiKey);
        const data = jobDataFor(run, {
          runId,
          suite: { path: plan.suite.root, digest: suiteDigest },
          ...(plan.predictions === undefined
            ? {}
            : {
                predictions: { path: plan.predictions.file, digest: plan.predictions.digest },
              }),
          sandbox: sandboxKind,
          ...(endpoint === undefined ? {} : { endpoint }),
          maxAttempts: plan.maxAttempts,
          priorAttempts: store.attemptCount(run.key),
        });
        const list = byQueue.get(queue) ?? [];
        list.push({
          name: "run",
          data,
          opts: {
            jobId: id,
            attempts: options.jobAttempts ?? 3,
            backoff: { type: "exponential", delay: 1_000 },
            removeOnComplete: false,
            removeOnFail: false,
          },
        });
        byQueue.set(queue, list);
      }
      for (const [queue, jobs] of byQueue) {
        for (let index = 0; index < jobs.length; index += 500) {
          await queue.addBulk(jobs.slice(index, index + 500));
        }
      }
    }

    while (outstanding.size > 0 && !isAborted(options.signal)) {
      await sleep(pollIntervalMs, options.signal);
      if (isAborted(options.signal)) break;
      try {
        await sweep();
      } catch (error) {
        warnOnce(`could not collect results from ${label}: ${messageOf(error)}`);
        continue;
      }
      if (!stoppedByBudget && budgetReached() && outstanding.size > 0) {
        stoppedByBudget = true;
        await withdrawWaiting();
      }
    }
    await writeManifest(plan.runDir, { ...manifest, updatedAt: new Date().toISOString() });
    return {
      runDir: plan.runDir,
      total: planned.length,
      alreadyDone,
      executed: done,
      failed,
      notScheduled,
      stoppedByBudget,
      aborted: isAborted(options.signal),
      costUsd: store.totalCostUsd(),
      wallTimeMs: performance.now() - started,
    };
  } finally {
    for (const queue of queues.values()) await queue.close().catch(() => undefined);
    client?.disconnect();
    store.close();
  }
}

function isAborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
}

async function removeJob(job: Job): Promise<void> {
  // Already gone (another coordinator of the same run removed it): nothing to do.
  await job.remove().catch(() => undefined);
}

function attemptIdentity(key: PlannedRun["key"], attempt: number, startedAt: string): string {
  return `${formatRunKey(key)}|${attempt}|${startedAt}`;
}

/** Infrastructure attempts a worker made, each recorded once however often a job is collected. */
function recordInfraAttempts(
  store: ResultsStore,
  run: PlannedRun,
  attempts: ReadonlyArray<{
    readonly attempt: number;
    readonly error?: string;
    readonly costUsd: number;
    readonly startedAt: string;
    readonly finishedAt: string;
  }>,
  seen: Set<string>,
): void {
  for (const attempt of attempts) {
    const identity = attemptIdentity(run.key, attempt.attempt, attempt.startedAt);
    if (seen.has(identity)) continue;
    store.recordInfraAttempt({
      ...run.key,
      attempt: attempt.attempt,
      ...(attempt.error === undefined ? {} : { error: attempt.error }),
      costUsd: attempt.costUsd,
      startedAt: attempt.startedAt,
      finishedAt: attempt.finishedAt,
    });
    seen.add(identity);
  }
}
