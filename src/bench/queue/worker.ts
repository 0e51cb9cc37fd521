/**
 * A queue worker (`skillsmith worker`): executes the run jobs that coordinators enqueue, with
 * the same sandboxes, agents and execution function (`executeWithRetries`) as the in-process
 * runner, and returns each result as the job's return value for the coordinator to store.
 *
 * Workers find queues in a Redis registry (one queue per provider+model rate-limit group) and
 * attach a BullMQ worker to each, with the group's limit. A job's lock is renewed while it runs;
 * a worker killed with -9 stops renewing, and after `lockDurationMs` another worker's stalled
 * check puts the job back in the queue.
 *
 * One file (a little over 400 lines): the job handler, the registry watcher and the shutdown
 * share the worker's state (open sandboxes, loaded suites, the concurrency permit, the force
 * signal) as closures; split apart they would need that state passed around as an object.
 */
import { hostname } from "node:os";
import { resolve } from "node:path";
// Types only: BullMQ loads when the worker starts (~0.25 s of start-up for every other command).
import type { Job, Worker } from "bullmq";
import type { AgentHarnessV1 } from "../../agents/index.js";
import { InfrastructureError, isSkillsmithError } from "../../core/errors.js";
import { Semaphore } from "../../core/limit.js";
import { parseResult } from "../../core/parse.js";
import { defaultCacheDir, type SandboxV1, treeDigest } from "../../env/index.js";
import { redactKnownSecrets, registerEnvironmentSecrets } from "../../model/redact.js";
import {
  type AttemptLedger,
  type ExecutionContext,
  executeWithRetries,
  messageOf,
} from "../run/execute.js";
import { endpointFromEnvironment } from "../run/model-endpoint.js";
import type { SandboxKind } from "../run/options.js";
import type { PlannedRun } from "../run/plan.js";
import { Predictions } from "../run/predictions.js";
import { harnessesFor, openSandbox, preparedBases } from "../run/prepare.js";
import type { AttemptRecord } from "../store/results.js";
import { loadSuite } from "../suite/load.js";
import type { Configuration } from "../suite/schema.js";
import type { Suite } from "../suite/types.js";
import { createRedisClient, queueConnectionOf, type RedisConnectionOptions } from "./connection.js";
import {
  DEFAULT_QUEUE_PREFIX,
  QUEUE_RESULT_FORMAT,
  type QueueJobData,
  type QueueJobResult,
  queueJobSchema,
  queueNameOf,
  rateLimitSchema,
  registryKeys,
} from "./jobs.js";

export interface QueueWorkerOptions {
  /** `redis://…` / `rediss://…`, or parsed options. */
  readonly queue: string | RedisConnectionOptions;
  /** Runs this process executes at the same time, over every queue (default 1). */
  readonly concurrency?: number;
  /** How long a job's lock lives without renewal (default 30 s); a dead worker's job waits this long. */
  readonly lockDurationMs?: number;
  /** How often stalled jobs are looked for (default: the lock duration). */
  readonly stalledIntervalMs?: number;
  /** Times a job may lose its worker before it fails (default 3). */
  readonly maxStalledCount?: number;
  /** Execute jobs that ask for `--sandbox unsafe` (refused otherwise). */
  readonly allowUnsafe?: boolean;
  readonly cacheDir?: string;
  /** Where API keys and model base URLs come from (the worker's own environment). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** How often the registry is read for new queues (default 2 s). */
  readonly registryPollMs?: number;
  readonly prefix?: string;
  /** Recorded on every job this worker takes (default `<host name>:<pid>`). */
  readonly name?: string;
  /** Build the harness of a configuration (tests); default as in `runSuite`. */
  readonly harnessFor?: (
    configuration: Configuration,
    defaults: () => AgentHarnessV1,
  ) => AgentHarnessV1;
  /** Aborting stops taking jobs and waits for the running ones. */
  readonly signal?: AbortSignal;
  /** Aborting also interrupts running jobs (they go back to the queue). */
  readonly forceSignal?: AbortSignal;
  readonly onLog?: (message: string) => void;
  /** Called when a job finished here (tests, logs). */
  readonly onJobDone?: (data: QueueJobData, outcome: QueueJobResult["outcome"]["kind"]) => void;
}

export interface QueueWorkerSummary {
  readonly completed: number;
  readonly failed: number;
}

/** A suite as one job needs it, checked against the digest the coordinator recorded. */
interface LoadedRun {
  readonly suite: Suite;
  readonly harnessOf: (configuration: Configuration) => AgentHarnessV1;
  readonly baseFor: ExecutionContext["baseFor"];
}

/** Run a worker until `signal` aborts; see the module comment. */
export async function runQueueWorker(options: QueueWorkerOptions): Promise<QueueWorkerSummary> {
  const { connection, label } = queueConnectionOf(options.queue);
  const log = options.onLog ?? (() => undefined);
  const concurrency = options.concurrency ?? 1;
  const lockDuration = options.lockDurationMs ?? 30_000;
  const prefix = options.prefix ?? DEFAULT_QUEUE_PREFIX;
  const env = options.env ?? process.env;
  const cacheDir = options.cacheDir ?? defaultCacheDir(env);
  // The process-wide concurrency over every queue's BullMQ worker.
  const slots = new Semaphore(concurrency);
  const logOnce = onceAMinute(log);
  const workerName = options.name ?? `${hostname()}:${process.pid}`;
  const registry = registryKeys(prefix);
  const { UnrecoverableError, Worker } = await import("bullmq");
  const client = await createRedisClient(connection, label, { onConnectionEvent: log });
  const workers = new Map<string, Worker>();
  const sandboxes = new Map<SandboxKind, Promise<SandboxV1>>();
  const loaded = new Map<string, Promise<LoadedRun>>();
  const predictionsByDigest = new Map<string, Promise<Predictions>>();
  const workerEndpoint = endpointFromEnvironment(env);
  // The worker's own keys come from `env`, which need not be this process's environment.
  registerEnvironmentSecrets(env);
  let completed = 0;
  let failed = 0;

  const force = new AbortController();
  options.forceSignal?.addEventListener("abort", () => force.abort(), { once: true });

  const sandboxFor = (kind: SandboxKind): Promise<SandboxV1> => {
    let promise = sandboxes.get(kind);
    if (promise === undefined) {
      promise = openSandbox(kind, log);
      sandboxes.set(kind, promise);
      promise.catch(() => sandboxes.delete(kind));
    }
    return promise;
  };

  const predictionsFor = (data: QueueJobData): Promise<Predictions> | undefined => {
    const recorded = data.predictions;
    if (recorded === undefined) return undefined;
    let promise = predictionsByDigest.get(recorded.digest);
    if (promise === undefined) {
      promise = Predictions.read(resolve(recorded.path)).then((predictions) => {
        if (predictions.digest !== recorded.digest) {
          throw new InfrastructureError(
            "queue.predictions-differ",
            `predictions ${recorded.path} on this worker differ from the coordinator's (digest ${predictions.digest.slice(0, 12)}, expected ${recorded.digest.slice(0, 12)})`,
          );
        }
        return predictions;
      });
      predictionsByDigest.set(recorded.digest, promise);
      promise.catch(() => predictionsByDigest.delete(recorded.digest));
    }
    return promise;
  };

  const runFor = (data: QueueJobData, sandbox: SandboxV1): Promise<LoadedRun> => {
    const cacheKey = `${data.runId}|${data.suite.digest}|${data.predictions?.digest ?? ""}|${sandbox.kind}`;
    let promise = loaded.get(cacheKey);
    if (promise === undefined) {
      promise = (async () => {
        const suite = await loadSuite(resolve(data.suite.path));
        const digest = await treeDigest(suite.root);
        if (digest !== data.suite.digest) {
          throw new InfrastructureError(
            "queue.suite-differs",
            `suite ${data.suite.path} on this worker differs from the coordinator's (digest ${digest.slice(0, 12)}, expected ${data.suite.digest.slice(0, 12)})`,
          );
        }
        const predictions = await predictionsFor(data);
        return {
          suite,
          harnessOf: harnessesFor(suite, predictions, options.harnessFor),
          baseFor: preparedBases(sandbox, cacheDir),
        };
      })();
      loaded.set(cacheKey, promise);
      promise.catch(() => loaded.delete(cacheKey));
    }
    return promise;
  };

  const processJob = async (job: Job): Promise<QueueJobResult> => {
    const parsed = parseResult(queueJobSchema, job.data);
    if (!parsed.ok)
      throw new UnrecoverableError(
        `job ${job.id}: not a skillsmith run job (${parsed.error.message})`,
      );
    const data = parsed.value;
    if (data.sandbox === "unsafe" && options.allowUnsafe !== true) {
      throw new UnrecoverableError(
        `job ${job.id} asks for --sandbox unsafe; this worker refuses it (start it with --allow-unsafe to accept)`,
      );
    }
    const release = await slots.acquire();
    try {
      const sandbox = await sandboxFor(data.sandbox);
      const { suite, harnessOf, baseFor } = await runFor(data, sandbox);
      const skill = suite.skills.find((candidate) => candidate.id === data.key.skill);
      const requirement = skill?.requirements.find(
        (candidate) => candidate.id === data.key.requirement,
      );
      if (skill === undefined || requirement === undefined) {
        throw new UnrecoverableError(
          `job ${job.id}: the suite has no ${data.key.skill}/${data.key.requirement}`,
        );
      }
      const run: PlannedRun = {
        key: data.key,
        configuration: data.configuration,
        skill,
        requirement,
      };
      const infraAttempts: Array<Omit<AttemptRecord, "outcome">> = [];
      const ledger: AttemptLedger = {
        attemptCount: () => data.priorAttempts + infraAttempts.length,
        recordInfraAttempt: (record) => {
          infraAttempts.push(record);
        },
      };
      const coordinatorBaseUrl = data.endpoint?.baseUrl;
      const context: ExecutionContext = {
        sandbox,
        baseFor,
        harnessOf,
        // The key comes from this machine only; the base URL too when this machine sets one.
        modelEndpoint: (configuration) => {
          const own = workerEndpoint(configuration);
          const baseUrl = own?.baseUrl ?? coordinatorBaseUrl;
          return {
            ...(baseUrl === undefined ? {} : { baseUrl }),
            ...(own?.apiKey === undefined ? {} : { apiKey: own.apiKey }),
          };
        },
        signal: force.signal,
      };
      const outcome = await executeWithRetries(run, context, {
        ledger,
        maxAttempts: data.maxAttempts,
        record: async (result) => result,
        onWarning: log,
      });
      if (outcome.kind === "aborted") {
        // Not an outcome of the run: the job goes back to the queue for another worker.
        throw new InfrastructureError(
          "queue.worker-stopped",
          "worker stopped while the run was in progress",
          { retryable: true },
        );
      }
      const result: QueueJobResult = {
        format: QUEUE_RESULT_FORMAT,
        infraAttempts: infraAttempts.map((record) => ({ ...record })),
        outcome:
          outcome.kind === "scored"
            ? { kind: "scored", result: outcome.result }
            : {
                kind: "failed",
                attempts: outcome.failure.attempts,
                error: outcome.failure.error,
              },
      };
      options.onJobDone?.(data, result.outcome.kind);
      // The return value is stored in Redis as it is: redacted here, not only when the
      // coordinator stores it (a failing check's message can quote a key the agent printed).
      return redactKnownSecrets(result, env);
    } catch (error) {
      if (isSkillsmithError(error) && (error.family === "usage" || error.family === "input")) {
        // The suite or predictions are wrong for everyone: retrying elsewhere cannot help.
        throw redactedError(new UnrecoverableError(`job ${job.id}: ${error.message}`), env);
      }
      // BullMQ keeps the message (failedReason) and the stack trace in the job's hash.
      throw redactedError(error, env);
    } finally {
      release();
    }
  };

  const attach = async (group: string): Promise<void> => {
    if (workers.has(group)) return;
    const limitText = await client.hget(registry.limits, group);
    let limiter: { max: number; duration: number } | undefined;
    if (limitText !== null) {
      const parsed = rateLimitSchema.safeParse(safeJson(limitText));
      if (parsed.success) limiter = { max: parsed.data.max, duration: parsed.data.durationMs };
      else log(`ignoring the malformed rate limit of ${group} in the registry: ${limitText}`);
    }
    const worker = new Worker(queueNameOf(group), processJob, {
      // Stored on each job it takes (`processedBy`): which machine and process ran a key.
      name: workerName,
      connection: client,
      prefix,
      concurrency,
      lockDuration,
      stalledInterval: options.stalledIntervalMs ?? lockDuration,
      maxStalledCount: options.maxStalledCount ?? 3,
      ...(limiter === undefined ? {} : { limiter }),
    });
    worker.on("error", (error) => logOnce(`queue ${group}: ${messageOf(error)}`));
    worker.on("completed", () => {
      completed += 1;
    });
    worker.on("failed", (job, error) => {
      failed += 1;
      log(`job ${job?.id ?? "?"} failed on this worker: ${messageOf(error)}`);
    });
    workers.set(group, worker);
    log(
      `worker on ${label}: queue ${queueNameOf(group)}${limiter === undefined ? "" : ` (at most ${limiter.max} runs per ${limiter.duration / 1000} s over all workers)`}, concurrency ${concurrency}`,
    );
  };

  const refresh = async (): Promise<void> => {
    const groups = await client.smembers(registry.groups);
    for (const group of groups.sort()) {
      if (/^[A-Za-z0-9._-]+$/.test(group)) await attach(group);
    }
  };

  try {
    const stopped = options.signal === undefined ? undefined : whenAborted(options.signal);
    // Commands wait through an outage, so a stop request must not wait for them.
    const refreshUnlessStopped = async (): Promise<void> => {
      const refreshed = refresh().catch((error: unknown) =>
        log(`could not read the queue registry: ${messageOf(error)}`),
      );
      await (stopped === undefined ? refreshed : Promise.race([refreshed, stopped]));
    };
    await refreshUnlessStopped();
    if (workers.size === 0) log(`worker on ${label}: waiting for a coordinator to enqueue runs`);
    const pollMs = options.registryPollMs ?? 2_000;
    while (!isAborted(options.signal)) {
      await sleep(pollMs, options.signal);
      if (isAborted(options.signal)) break;
      await refreshUnlessStopped();
    }
    log("stopping: finishing the runs in progress (interrupt again to abandon them)");
  } finally {
    // Graceful: wait for the runs in progress. Forced (second signal, or Redis gone for good):
    // stop waiting; the interrupted jobs' locks expire and other workers take them over.
    const closing = Promise.all(
      [...workers.values()].map((worker) => worker.close(force.signal.aborted)),
    ).catch((error: unknown) => log(`closing the queue workers: ${messageOf(error)}`));
    await Promise.race([closing, whenAborted(force.signal)]);
    if (force.signal.aborted) {
      log("abandoning the runs in progress (other workers take them over once their locks expire)");
      await Promise.race([
        Promise.all(
          // close() already runs (gracefully) and would return the same promise: drop the
          // connections instead, which ends the reconnect loops that keep the process alive.
          [...workers.values()].map((worker) => worker.disconnect().catch(() => undefined)),
        ),
        sleep(2_000),
      ]);
    }
    for (const promise of sandboxes.values()) {
      const sandbox = await promise.catch(() => undefined);
      await sandbox?.dispose?.();
    }
    client.disconnect();
  }
  return { completed, failed };
}

/**
 * The error itself (BullMQ tells an `UnrecoverableError` by its class) with its message and
 * stack trace redacted in place; anything thrown that is not an Error becomes one.
 */
function redactedError(
  error: unknown,
  environment: Readonly<Record<string, string | undefined>>,
): Error {
  const target = error instanceof Error ? error : new Error(String(error));
  target.message = redactKnownSecrets(target.message, environment);
  if (target.stack !== undefined) target.stack = redactKnownSecrets(target.stack, environment);
  return target;
}

/** A function, not an inline check, so TypeScript does not narrow `aborted` across awaits. */
function isAborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * The same message at most once a minute: a connection outage makes BullMQ emit one error per
 * reconnect attempt and connection, which would drown the one line that says what happened.
 */
export function onceAMinute(log: (message: string) => void): (message: string) => void {
  const lastShown = new Map<string, number>();
  return (message) => {
    const now = Date.now();
    const last = lastShown.get(message);
    if (last !== undefined && now - last < 60_000) return;
    lastShown.set(message, now);
    log(message);
  };
}

/** Resolves when `signal` aborts; holds no timer, so it never keeps the process alive. */
function whenAborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener("abort", () => resolve(), { once: true });
  });
}

/** Resolves after `milliseconds`, or as soon as `signal` aborts. */
export function sleep(milliseconds: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted === true) {
      resolve();
      return;
    }
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, milliseconds);
    signal?.addEventListener("abort", done, { once: true });
  });
}
