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
 * One file (about 630 lines): the gate, enqueueing, collecting, reuse and the restart rules above
 * are one protocol over the same queues and store; kept together so that protocol reads in one
 * place.
 */
import { randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
// Types only: BullMQ loads when a queue run starts (~0.25 s of start-up for every other command).
import type { Job, Queue } from "bullmq";
import type { Redis } from "ioredis";
import { InternalError, UsageError } from "../../core/errors.js";
import { unlessMissing, writeFileAtomic } from "../../core/fs.js";
import { parseResult } from "../../core/parse.js";
import { defaultCacheDir, type SandboxV1, treeDigest } from "../../env/index.js";
import { registerSecret } from "../../model/redact.js";
import { messageOf } from "../run/execute.js";
import { gateRuns, PREPARATION_FLAGS } from "../run/gate.js";
import type { ModelEndpoint } from "../run/model-endpoint.js";
import type { RunFailure, RunSuiteOptions, RunSuiteSummary, SandboxKind } from "../run/options.js";
import { openRunDirectory, type PlannedRun, planRun } from "../run/plan.js";
import { openSandbox } from "../run/prepare.js";
import { progressReporter } from "../run/progress.js";
import { BaselineSources } from "../run/reuse.js";
import { storeRunResult } from "../run/store-result.js";
import { writeManifest } from "../store/manifest.js";
import { formatRunKey, ResultsStore } from "../store/results.js";
import type { Configuration } from "../suite/schema.js";
import type { SuiteRequirement } from "../suite/types.js";
import { createRedisClient, queueConnectionOf, type RedisConnectionOptions } from "./connection.js";
import {
  DEFAULT_QUEUE_PREFIX,
  jobDataFor,
  jobIdOf,
  jobIdPrefix,
  parseQueueResult,
  type QueueJobData,
  type QueueJobVariant,
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
  if (options.agentEnv !== undefined && Object.keys(options.agentEnv).length > 0) {
    // It may hold keys, and the queue carries none: workers have their own environment.
    throw new UsageError(
      "queue-agent-env",
      "agentEnv is not carried to queue workers (it may hold secrets); set it in each worker's environment instead",
    );
  }
  const plan = await planRun(options);
  if (sandboxKind === "unsafe") {
    options.onWarning?.(
      "warning: workers will run agents and verifiers WITHOUT a sandbox (--sandbox unsafe), if started with --allow-unsafe: they can read and write anything the worker's user can",
    );
  }
  const opened = await openRunDirectory(plan, options, sandboxKind);
  const { store, planned, alreadyDone } = opened;
  let { manifest, pending } = opened;
  // The gate runs here, on the coordinator, as in the in-process runner (`../run/gate.ts`):
  // environments prepared and verifiers checked in this machine's sandbox, runs that could
  // measure nothing stored flagged at once, weak verifiers flagged on their results. Workers then
  // get only the runs worth an agent's time.
  let weak: ReadonlySet<string> = new Set();
  let gateSummary: Pick<RunSuiteSummary, "unmeasured" | "environmentFailures" | "check"> = {};
  if (options.check !== false) {
    let sandbox: SandboxV1;
    try {
      sandbox = await openSandbox(sandboxKind, options.onWarning, [
        plan.suite.root,
        plan.runDir,
        options.cacheDir ?? defaultCacheDir(),
        ...(plan.predictions === undefined ? [] : [plan.predictions.file]),
      ]);
    } catch (error) {
      store.close();
      throw error;
    }
    try {
      const gate = await gateRuns({
        suite: plan.suite,
        excluded: plan.excluded,
        store,
        planned,
        configurations: plan.configurations,
        repeats: plan.repeats,
        sandbox,
        cacheDir: options.cacheDir ?? defaultCacheDir(),
        options,
        record: (result) => storeRunResult(store, plan.runDir, result),
      });
      pending = gate.pending;
      weak = gate.weak;
      gateSummary = {
        unmeasured: gate.unmeasured,
        environmentFailures: gate.environmentFailures,
        ...(gate.check === undefined ? {} : { check: gate.check }),
      };
      manifest = { ...manifest, ...gate.manifest };
      await writeManifest(plan.runDir, manifest);
    } catch (error) {
      store.close();
      throw error;
    } finally {
      await sandbox.dispose?.();
    }
  }
  if (options.check === false) {
    // Without the gate, a result it stored earlier (flagged `environment-failure` or
    // `broken-verifier`, nothing measured) is decided again by running it, as the in-process
    // gate re-decides it every invocation: fixing the verifier and re-running must not leave it.
    const redecided = planned.filter(
      (run) => store.flagsOf(run.key)?.some((flag) => PREPARATION_FLAGS.has(flag)) === true,
    );
    for (const run of redecided) store.deleteResult(run.key);
    pending = [...pending, ...redecided];
  }
  const withWeakFlag = <
    Result extends { skill: string; requirement: string; flags: readonly string[] },
  >(
    result: Result,
  ): Result =>
    weak.has(`${result.skill}/${result.requirement}`) && !result.flags.includes("weak-verifier")
      ? { ...result, flags: [...result.flags, "weak-verifier"] }
      : result;
  let client: Redis | undefined;
  let sources: BaselineSources | undefined;
  const queues = new Map<string, Queue>();
  try {
    const runId = await queueRunId(plan.runDir);
    // Workers load the suite from disk; the command line's variants travel with each job, with
    // the tree digest of their folder, which the worker checks before it installs one.
    const variants: QueueJobVariant[] = [];
    for (const variant of options.variants ?? []) {
      const folder = resolve(variant.folder);
      // The skill named: the worker loads the whole suite, where "the only skill" of this
      // selection may be one of several.
      const skill = variant.skill ?? plan.suite.skills[0]?.id;
      variants.push({
        ...(skill === undefined ? {} : { skill }),
        name: variant.name,
        folder,
        digest: await treeDigest(folder),
      });
    }
    // `--reuse`, planned here as in the in-process runner: the sources are opened (and refused)
    // the same way; which run is reused is decided by the worker's fingerprint of it.
    const reuseOn = options.freshBaseline !== true && (options.reuse ?? []).length > 0;
    sources = reuseOn ? await BaselineSources.open(options.reuse ?? [], plan.runDir) : undefined;
    const reuseCandidates =
      sources === undefined ? undefined : await unassistedFingerprints(sources.runDirs);
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

    const endpointOf = (configuration: Configuration): ModelEndpoint | undefined => {
      const endpoint = options.modelEndpoint;
      return typeof endpoint === "function" ? endpoint(configuration) : endpoint;
    };
    /** The job of one run; `reuse: false` once the copy its fingerprint promised fell through. */
    const jobOf = (
      id: string,
      run: PlannedRun,
      choice: { readonly reuse: boolean },
    ): Parameters<Queue["addBulk"]>[0][number] => {
      const endpoint = endpointOf(run.configuration);
      // The key itself stays here; registered, it cannot reach Redis inside another field.
      registerSecret(endpoint?.apiKey);
      const candidates =
        choice.reuse && run.key.arm === "without"
          ? reuseCandidates?.(run.requirement, run.key.repeat)
          : undefined;
      const data = jobDataFor(run, {
        runId,
        suite: { path: plan.suite.root, digest: suiteDigest },
        ...(plan.predictions === undefined
          ? {}
          : { predictions: { path: plan.predictions.file, digest: plan.predictions.digest } }),
        sandbox: sandboxKind,
        ...(endpoint === undefined ? {} : { endpoint }),
        maxAttempts: plan.maxAttempts,
        priorAttempts: store.attemptCount(run.key),
        ...(options.baseImages === undefined ? {} : { baseImages: options.baseImages }),
        ...(options.prices === undefined ? {} : { prices: options.prices }),
        ...(options.setupNetwork === undefined ? {} : { setupNetwork: options.setupNetwork }),
        variants,
        ...(candidates === undefined || candidates.length === 0
          ? {}
          : { reuseCandidates: candidates }),
      });
      // Checked as a worker will check it: a value no worker accepts (a base image with a space)
      // is this command's mistake, said once here rather than as every job's failure.
      const checked = parseResult(queueJobSchema, data);
      if (!checked.ok) {
        throw new UsageError(
          "queue-job-invalid",
          `cannot enqueue ${formatRunKey(run.key)}: ${checked.error.field ?? "job"}: ${checked.error.message}`,
        );
      }
      return {
        name: "run",
        data,
        opts: {
          jobId: id,
          attempts: options.jobAttempts ?? 3,
          backoff: { type: "exponential", delay: 1_000 },
          removeOnComplete: false,
          removeOnFail: false,
        },
      };
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
    let reused = 0;
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
      if (value.outcome.kind === "reusable") {
        const fingerprint = value.outcome.fingerprint;
        const offered = reuseCandidates?.(run.requirement, run.key.repeat) ?? [];
        const copied =
          sources !== undefined && run.key.arm === "without" && offered.includes(fingerprint.digest)
            ? await sources.reuse(run, fingerprint, plan.runDir)
            : undefined;
        if (copied === undefined) {
          // Nothing to copy after all (a source changed, or the answer was not for this job):
          // the run is executed instead, never left out.
          await removeJob(job);
          await queueOf(run.configuration).add(
            "run",
            ...addArguments(jobOf(id, run, { reuse: false })),
          );
          return;
        }
        if (!store.has(run.key)) {
          const stored = await storeRunResult(store, plan.runDir, copied);
          done += 1;
          reused += 1;
          progress({ ...run.key, status: stored.status, passRatio: stored.passRatio });
        }
        outstanding.delete(id);
        await removeJob(job);
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
          await storeRunResult(store, plan.runDir, withWeakFlag({ ...result, ...run.key }));
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
      const byQueue = new Map<Queue, Array<Parameters<Queue["addBulk"]>[0][number]>>();
      for (const [id, run] of outstanding) {
        const queue = queueOf(run.configuration);
        const list = byQueue.get(queue) ?? [];
        list.push(jobOf(id, run, { reuse: true }));
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
      reused,
      ...gateSummary,
      failed,
      notScheduled,
      stoppedByBudget,
      aborted: isAborted(options.signal),
      costUsd: store.totalCostUsd(),
      wallTimeMs: performance.now() - started,
    };
  } finally {
    sources?.close();
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

/** `Queue.add`'s arguments for a job built for `addBulk`. */
function addArguments(
  job: Parameters<Queue["addBulk"]>[0][number],
): [QueueJobData, Parameters<Queue["add"]>[2]] {
  return [job.data as QueueJobData, job.opts];
}

/**
 * The fingerprints of the sources' unassisted runs, and how many runs carry each: a run key's
 * candidates are those of its requirement (id and text, both fingerprinted) held by at least
 * `repeat` runs, as `BaselineSources.reuse` gives repeat r the r-th match. Filtering on what the
 * fingerprint itself contains never drops a run that could match; it keeps each job small.
 */
async function unassistedFingerprints(
  runDirs: readonly string[],
): Promise<(requirement: SuiteRequirement, repeat: number) => string[]> {
  const counts = new Map<string, { count: number; requirement: string }>();
  for (const runDir of runDirs) {
    const source = ResultsStore.openReadOnly(runDir);
    try {
      for (const result of source.results()) {
        const fingerprint = result.fingerprint;
        if (result.arm !== "without" || fingerprint === undefined) continue;
        const inputs = fingerprint.inputs.requirement as
          | { id?: unknown; text?: unknown }
          | undefined;
        const entry = counts.get(fingerprint.digest) ?? {
          count: 0,
          requirement: JSON.stringify([inputs?.id, inputs?.text]),
        };
        entry.count += 1;
        counts.set(fingerprint.digest, entry);
      }
    } finally {
      source.close();
    }
  }
  return (requirement, repeat) => {
    const wanted = JSON.stringify([requirement.id, requirement.raw]);
    return [...counts]
      .filter(([, entry]) => entry.requirement === wanted && entry.count >= repeat)
      .map(([digest]) => digest)
      .sort();
  };
}
