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
 * This is a `Scheduler` of the run session (`../run/session.ts`): the plan, the gate, the store,
 * the flags and the summary are the session's, as for an in-process run; only where and when a
 * key executes is decided here.
 */
import { randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
// Types only: BullMQ loads when a queue run starts (~0.25 s of start-up for every other command).
import type { Job, Queue } from "bullmq";
import type { Redis } from "ioredis";
import { z } from "zod";
import { definedFields } from "../../core/defined.js";
import { InternalError, UsageError } from "../../core/errors.js";
import { formatTag } from "../../core/format-tag.js";
import { formatTagSchema, readingOlderTags } from "../../core/format-tag-schema.js";
import { unlessMissing, writeFileAtomic } from "../../core/fs.js";
import { fieldPrefix, parseJsonResult, parseResult } from "../../core/parse.js";
import { treeDigest } from "../../env/index.js";
import { registerSecret } from "../../model/redact.js";
import type { RunEmitter } from "../run/events.js";
import { messageOf } from "../run/execute.js";
import { endpointFor } from "../run/model-endpoint.js";
import type { RunSuiteOptions, RunSuiteSummary, SandboxKind } from "../run/options.js";
import type { PlannedRun } from "../run/plan.js";
import { RunSession, type ScheduledWork, type Scheduler } from "../run/session.js";
import { formatRunKey, ResultsStore, type RunFingerprint } from "../store/results.js";
import type { Configuration } from "../suite/schema.js";
import type { SuiteRequirement } from "../suite/types.js";
import { loadBullmq } from "./bullmq.js";
import { createRedisClient, queueConnectionOf, type RedisConnectionOptions } from "./connection.js";
import {
  DEFAULT_QUEUE_PREFIX,
  jobDataFor,
  jobIdOf,
  jobIdPrefix,
  parseQueueResult,
  type QueueJobData,
  type QueueJobDistractor,
  type QueueJobVariant,
  queueJobSchema,
  queueNameOf,
  type RateLimit,
  rateLimitGroupOf,
  registryKeys,
} from "./jobs.js";
import { onceAMinute, sleep } from "./worker.js";

export const QUEUE_RUN_FILE = "queue.json";
const QUEUE_RUN_FORMAT = formatTag("queue-run", 1);

/** `queue.json`; files of versions before the tag have none. */
const queueRunFileSchema = readingOlderTags(
  z.object({
    format: formatTagSchema(QUEUE_RUN_FORMAT),
    runId: z.string().regex(/^[a-f0-9]{16,64}$/, "expected 16 to 64 lower-case hex digits"),
    createdAt: z.string().optional(),
  }),
  QUEUE_RUN_FORMAT,
  [{ style: "none" }],
);

/** A run's options plus the queue scheduler's own: where Redis is, rate limits, polling. */
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
}

/** The run's namespace in Redis, kept in the run directory so a restart finds its jobs. */
async function queueRunId(runDir: string): Promise<string> {
  const file = join(runDir, QUEUE_RUN_FILE);
  // Unreadable is not "no run yet": a new id would orphan the run's jobs in Redis.
  const text = await unlessMissing(file, readFile(file, "utf8"));
  if (text !== undefined) {
    const parsed = parseJsonResult(queueRunFileSchema, text);
    if (parsed.ok) return parsed.value.runId;
    throw new UsageError(
      "bench.queue-run-file-invalid",
      `${file}: ${fieldPrefix(parsed.error)}${parsed.error.message}; expected {"format": "${QUEUE_RUN_FORMAT}", "runId": "<hex>"} as written by bench run --queue; remove it to start a new queue namespace (results already stored are kept)`,
      {
        data: { file, ...(parsed.error.field === undefined ? {} : { field: parsed.error.field }) },
      },
    );
  }
  const runId = randomBytes(12).toString("hex");
  await writeFileAtomic(
    file,
    `${JSON.stringify({ format: QUEUE_RUN_FORMAT, runId, createdAt: new Date().toISOString() }, null, 2)}\n`,
  );
  return runId;
}

/** Run every missing run of a suite on workers through Redis; see the module comment. */
export async function runSuiteOnQueue(options: QueueRunOptions): Promise<RunSuiteSummary> {
  return new RunSession(options, new QueueScheduler(options)).run();
}

/** A job built for `Queue.addBulk`. */
type BulkJob = Parameters<Queue["addBulk"]>[0][number];

/**
 * The queue scheduler: enqueues the session's pending runs, collects what workers return into
 * the session's tracker, withdraws what no worker started once the budget is reached or the
 * signal aborts. The gate, the store, the flags and the summary are the session's.
 */
export class QueueScheduler implements Scheduler {
  readonly sandbox: SandboxKind;
  readonly executesHere = false;

  constructor(private readonly options: QueueRunOptions) {
    this.sandbox = options.sandbox ?? "local";
  }

  admit(options: RunSuiteOptions, events: RunEmitter): void {
    if (options.agentEnv !== undefined && Object.keys(options.agentEnv).length > 0) {
      // It may hold keys, and the queue carries none: workers have their own environment.
      throw new UsageError(
        "bench.queue-agent-env",
        "agentEnv is not carried to queue workers (it may hold secrets); set it in each worker's environment instead",
      );
    }
    if (this.sandbox === "unsafe") {
      events.warn(
        "warning: workers will run agents and verifiers WITHOUT a sandbox (--sandbox unsafe), if started with --allow-unsafe: they can read and write anything the worker's user can",
        "danger",
      );
    }
  }

  async execute(work: ScheduledWork): Promise<void> {
    const { connection, label } = queueConnectionOf(this.options.queue);
    const prefix = this.options.prefix ?? DEFAULT_QUEUE_PREFIX;
    let client: Redis | undefined;
    const queues = new Map<string, Queue>();
    try {
      const runId = await queueRunId(work.plan.runDir);
      const jobs = await this.jobBuilder(work, runId);
      const { Queue } = await loadBullmq();
      client = await createRedisClient(connection, label, {
        onConnectionEvent: (message) => work.events.emit({ type: "connection", message }),
      });
      const redis = client;
      const warnOnce = onceAMinute((message) => work.events.warn(message, "warning"));
      const groups = await this.registerGroups(work, redis, prefix);
      for (const group of groups) {
        const queue = new Queue(queueNameOf(group), { connection: redis, prefix });
        queue.on("error", (error) => warnOnce(`queue ${group}: ${messageOf(error)}`));
        queues.set(group, queue);
      }
      const collector = new QueueCollection(work, runId, queues, jobs);
      await collector.run(this.options.pollIntervalMs ?? 1_000, label, warnOnce);
    } finally {
      for (const queue of queues.values()) await queue.close().catch(() => undefined);
      client?.disconnect();
    }
  }

  /** The rate-limit groups of this run's configurations, registered (limits first) for workers. */
  private async registerGroups(
    work: ScheduledWork,
    redis: Redis,
    prefix: string,
  ): Promise<string[]> {
    const registry = registryKeys(prefix);
    const groups = [...new Set(work.plan.configurations.map(rateLimitGroupOf))].sort();
    for (const [group, limit] of Object.entries(this.options.rateLimits ?? {})) {
      if (!groups.includes(group)) {
        work.events.warn(
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
    return groups;
  }

  /** The job of each run; `reuse: false` once the copy its fingerprint promised fell through. */
  private async jobBuilder(work: ScheduledWork, runId: string): Promise<JobBuilder> {
    const { plan, options, store, sources } = work;
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
    const distractors: QueueJobDistractor[] = [];
    for (const given of options.distractors ?? []) {
      const folder = resolve(given);
      distractors.push({ folder, digest: await treeDigest(folder) });
    }
    // `--reuse`: the session opened the sources; which run is reused is decided by the
    // worker's fingerprint of it.
    const reuseCandidates =
      sources === undefined ? undefined : await unassistedFingerprints(sources.runDirs);
    const jobAttempts = this.options.jobAttempts ?? 3;
    const sandbox = this.sandbox;
    const candidatesOf = (run: PlannedRun): string[] =>
      reuseCandidates?.(run.requirement, run.key.repeat) ?? [];
    const build = (id: string, run: PlannedRun, choice: { readonly reuse: boolean }): BulkJob => {
      const endpoint = endpointFor(run.configuration, options);
      // The key itself stays here; registered, it cannot reach Redis inside another field.
      registerSecret(endpoint?.apiKey);
      const candidates = choice.reuse && run.key.arm === "without" ? candidatesOf(run) : [];
      const data = jobDataFor(run, {
        runId,
        suite: { path: plan.suite.root, digest: work.manifest.suite.digest },
        ...(plan.predictions === undefined
          ? {}
          : { predictions: { path: plan.predictions.file, digest: plan.predictions.digest } }),
        sandbox,
        ...(endpoint === undefined ? {} : { endpoint }),
        maxAttempts: plan.maxAttempts,
        priorAttempts: store.attemptCount(run.key),
        ...definedFields({
          baseImages: options.baseImages,
          prices: options.prices,
          setupNetwork: options.setupNetwork,
        }),
        variants,
        distractors,
        ...(candidates.length === 0 ? {} : { reuseCandidates: candidates }),
      });
      // Checked as a worker will check it: a value no worker accepts (a base image with a space)
      // is this command's mistake, said once here rather than as every job's failure.
      const checked = parseResult(queueJobSchema, data);
      if (!checked.ok) {
        throw new UsageError(
          "bench.queue-job-invalid",
          `cannot enqueue ${formatRunKey(run.key)}: ${checked.error.field ?? "job"}: ${checked.error.message}`,
        );
      }
      return {
        name: "run",
        data,
        opts: {
          jobId: id,
          attempts: jobAttempts,
          backoff: { type: "exponential", delay: 1_000 },
          removeOnComplete: false,
          removeOnFail: false,
        },
      };
    };
    return { build, candidatesOf };
  }
}

interface JobBuilder {
  readonly build: (id: string, run: PlannedRun, choice: { readonly reuse: boolean }) => BulkJob;
  /** The fingerprint digests an unassisted run's job offers the worker for reuse. */
  readonly candidatesOf: (run: PlannedRun) => string[];
}

/**
 * One invocation's jobs on the queues: the keys still outstanding, what finished collected into
 * the session's tracker (once, however often a job is seen), the waiting ones withdrawn when
 * the run stops early.
 */
class QueueCollection {
  private readonly outstanding = new Map<string, PlannedRun>();
  private readonly seenAttempts: Set<string>;

  constructor(
    private readonly work: ScheduledWork,
    private readonly runId: string,
    private readonly queues: ReadonlyMap<string, Queue>,
    private readonly jobs: JobBuilder,
  ) {
    for (const run of work.pending) this.outstanding.set(jobIdOf(runId, run.key), run);
    this.seenAttempts = new Set(
      work.store
        .attempts()
        .map((attempt) => attemptIdentity(attempt, attempt.attempt, attempt.startedAt)),
    );
  }

  async run(pollIntervalMs: number, label: string, warnOnce: (message: string) => void) {
    const { tracker, options } = this.work;
    tracker.progress();
    // What finished while no coordinator was watching comes first.
    await this.sweep();
    if (!tracker.mayStart(this.outstanding.size)) await this.withdrawWaiting();
    else await this.enqueueOutstanding();
    while (this.outstanding.size > 0 && !tracker.aborted()) {
      await sleep(pollIntervalMs, options.signal);
      if (tracker.aborted()) break;
      try {
        await this.sweep();
      } catch (error) {
        warnOnce(`could not collect results from ${label}: ${messageOf(error)}`);
        continue;
      }
      if (!tracker.stoppedByBudget && !tracker.mayStart(this.outstanding.size)) {
        await this.withdrawWaiting();
      }
    }
  }

  private queueOf(configuration: Configuration): Queue {
    const queue = this.queues.get(rateLimitGroupOf(configuration));
    if (queue === undefined)
      throw new InternalError(
        "bench.queue-no-queue",
        `no queue for configuration ${configuration.id}`,
      );
    return queue;
  }

  private async enqueueOutstanding(): Promise<void> {
    const byQueue = new Map<Queue, BulkJob[]>();
    for (const [id, run] of this.outstanding) {
      const queue = this.queueOf(run.configuration);
      const list = byQueue.get(queue) ?? [];
      list.push(this.jobs.build(id, run, { reuse: true }));
      byQueue.set(queue, list);
    }
    for (const [queue, jobs] of byQueue) {
      for (let index = 0; index < jobs.length; index += 500) {
        await queue.addBulk(jobs.slice(index, index + 500));
      }
    }
  }

  private async sweep(): Promise<void> {
    const ownPrefix = jobIdPrefix(this.runId);
    let active = 0;
    for (const queue of this.queues.values()) {
      const activeIds = await queue.getRanges(["active"], 0, -1, true);
      active += activeIds.filter((id) => this.outstanding.has(id)).length;
    }
    const changed = active !== this.running;
    this.running = active;
    this.work.tracker.setRunning(active);
    let collected = false;
    for (const queue of this.queues.values()) {
      const finished = await queue.getRanges(["completed", "failed"], 0, -1, true);
      for (const id of finished) {
        if (!id.startsWith(ownPrefix)) continue;
        const job = await queue.getJob(id);
        if (job !== undefined) {
          await this.collect(job as Job);
          collected = true;
        }
      }
    }
    if (changed && !collected) this.work.tracker.progress();
  }

  private running = 0;

  /** A key given up: its job is removed, the tracker counts the failure. */
  private async giveUp(job: Job, run: PlannedRun, attempts: number, error: string, shown = true) {
    this.work.tracker.failed({ key: run.key, attempts, error }, shown);
    this.outstanding.delete(job.id ?? "");
    await removeJob(job);
  }

  private async collect(job: Job): Promise<void> {
    const { store } = this.work;
    const id = job.id ?? "";
    const run = this.outstanding.get(id);
    const state = await job.getState();
    if (state !== "completed" && state !== "failed") return;
    if (run === undefined) {
      // A key of this run not planned by this invocation (another --config): leave it for
      // the invocation that plans it, unless its result is already stored.
      const data = queueJobSchema.safeParse(job.data as unknown);
      if (data.success && store.has(data.data.key)) await removeJob(job);
      return;
    }
    if (state === "failed") return this.giveUp(job, run, job.attemptsMade, job.failedReason);
    const parsed = parseQueueResult(job.returnvalue);
    if (!parsed.ok) return this.giveUp(job, run, job.attemptsMade, parsed.error);
    const value = parsed.value;
    recordInfraAttempts(store, run, value.infraAttempts, this.seenAttempts);
    const outcome = value.outcome;
    if (outcome.kind === "failed") return this.giveUp(job, run, outcome.attempts, outcome.error);
    if (outcome.kind === "reusable") return this.collectReusable(job, run, outcome.fingerprint);
    const result = outcome.result;
    if (formatRunKey(result) !== formatRunKey(run.key)) {
      const error = `the worker returned the result of ${formatRunKey(result)} for job ${id}`;
      return this.giveUp(job, run, job.attemptsMade, error, false);
    }
    // Committed before the job is removed: a crash in between leaves the job, which the next
    // sweep (or the restarted coordinator) finds and, the key being stored, only removes.
    if (!store.has(run.key)) {
      try {
        const stored = await this.work.tracker.storeResult({ ...result, ...run.key });
        this.work.tracker.scored(run, stored);
      } catch (error) {
        // A malformed row from Redis must not stall the run: report it as this key's failure.
        const reason = `the result of job ${id} could not be stored: ${messageOf(error)}`;
        return this.giveUp(job, run, result.attempts, reason);
      }
    } else {
      this.work.tracker.progress();
    }
    this.outstanding.delete(id);
    await removeJob(job);
  }

  /** The worker found the run's fingerprint among the candidates: copy it, or run it after all. */
  private async collectReusable(
    job: Job,
    run: PlannedRun,
    fingerprint: RunFingerprint,
  ): Promise<void> {
    const { sources, store, plan, tracker } = this.work;
    const id = job.id ?? "";
    const copied =
      sources !== undefined &&
      run.key.arm === "without" &&
      this.jobs.candidatesOf(run).includes(fingerprint.digest)
        ? await sources.reuse(run, fingerprint, plan.runDir)
        : undefined;
    if (copied === undefined) {
      // Nothing to copy after all (a source changed, or the answer was not for this job):
      // the run is executed instead, never left out.
      await removeJob(job);
      await this.queueOf(run.configuration).add(
        "run",
        ...addArguments(this.jobs.build(id, run, { reuse: false })),
      );
      return;
    }
    if (!store.has(run.key)) {
      const stored = await tracker.storeResult(copied, true);
      tracker.scored(run, stored, true);
    }
    this.outstanding.delete(id);
    await removeJob(job);
  }

  /** Take back every job of this run no worker has started; running ones finish. */
  private async withdrawWaiting(): Promise<void> {
    let withdrawn = 0;
    for (const [id, run] of [...this.outstanding]) {
      const job = await this.queueOf(run.configuration).getJob(id);
      if (job === undefined) {
        this.outstanding.delete(id);
        withdrawn += 1;
        continue;
      }
      const state = await job.getState();
      if (state === "waiting" || state === "delayed" || state === "prioritized") {
        const removed = await job
          .remove()
          .then(() => true)
          .catch(() => false);
        if (removed) {
          this.outstanding.delete(id);
          withdrawn += 1;
        }
      }
    }
    this.work.tracker.notScheduled(withdrawn);
  }
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
