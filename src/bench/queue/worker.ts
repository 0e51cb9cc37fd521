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
 * The job handler, its checks of what a job may ask, the registry watcher and the shutdown share
 * one `WorkerState` (open sandboxes, loaded suites, the concurrency permit, the force signal).
 */
import { hostname } from "node:os";
import { resolve } from "node:path";
// Types only: BullMQ loads when the worker starts (~0.25 s of start-up for every other command).
import type { Job, UnrecoverableError as UnrecoverableErrorClass, Worker } from "bullmq";
import type { Redis as RedisClient } from "ioredis";
import type { AgentHarnessV1 } from "../../agents/index.js";
import { definedFields } from "../../core/defined.js";
import { InfrastructureError, isSkillsmithError } from "../../core/errors.js";
import { isAborted, Semaphore } from "../../core/limit.js";
import { PromiseMemo } from "../../core/memo.js";
import { parseResult } from "../../core/parse.js";
import { defaultCacheDir, type PreparedBase, type SandboxV1, treeDigest } from "../../env/index.js";
import { redactKnownSecrets, registerEnvironmentSecrets } from "../../model/redact.js";
import { parseModelSpec } from "../../model/spec.js";
import { prepareSkillBase, type SkillEnvironmentOptions } from "../run/environments.js";
import {
  type AttemptLedger,
  type ExecutionContext,
  executeWithRetries,
  messageOf,
} from "../run/execute.js";
import { endpointFromEnvironment, modelSpecOf } from "../run/model-endpoint.js";
import type { SandboxKind } from "../run/options.js";
import { agentVersions, type PlannedRun } from "../run/plan.js";
import { Predictions } from "../run/predictions.js";
import { harnessesFor, openSandbox } from "../run/prepare.js";
import { fingerprints } from "../run/reuse.js";
import type { AttemptRecord, RunFingerprint } from "../store/results.js";
import { withDistractors } from "../suite/distractors.js";
import { loadSuite } from "../suite/load.js";
import type { Configuration } from "../suite/schema.js";
import type { Suite } from "../suite/types.js";
import { checkVariantFolder, type VariantOption, withVariants } from "../suite/variants.js";
import { loadBullmq } from "./bullmq.js";
import { createRedisClient, queueConnectionOf, type RedisConnectionOptions } from "./connection.js";
import {
  DEFAULT_QUEUE_PREFIX,
  QUEUE_RESULT_FORMAT,
  type QueueJobData,
  type QueueJobDistractor,
  type QueueJobResult,
  type QueueJobVariant,
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
  /**
   * Model base URLs a job may name when this worker sends its own API key there. A worker whose
   * environment sets no base URL of its own refuses a job naming any other (`--accept-base-url`):
   * whoever can write to Redis must not be able to send this machine's key where they like.
   */
  readonly acceptBaseUrls?: readonly string[];
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
  /** The run's fingerprint on this worker, as the in-process runner stores it. */
  readonly fingerprintOf: (run: PlannedRun) => Promise<RunFingerprint>;
}

/**
 * What every job this process takes shares: its settings, the process-wide concurrency permit,
 * the force signal, and what is opened or loaded once per process (sandboxes, suites,
 * predictions, agent CLI versions), each forgotten when it failed so a later job tries again.
 */
interface WorkerState {
  readonly options: QueueWorkerOptions;
  readonly log: (message: string) => void;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cacheDir: string;
  /** The process-wide concurrency over every queue's BullMQ worker. */
  readonly slots: Semaphore;
  /** Aborted by `forceSignal`: running jobs are interrupted and go back to the queue. */
  readonly force: AbortController;
  readonly workerEndpoint: ReturnType<typeof endpointFromEnvironment>;
  readonly UnrecoverableError: typeof UnrecoverableErrorClass;
  readonly sandboxes: PromiseMemo<SandboxKind, SandboxV1>;
  readonly runs: PromiseMemo<string, LoadedRun>;
  readonly predictions: PromiseMemo<string, Predictions>;
  /** The `--version` of each agent CLI on this worker: the CLI that runs is this machine's. */
  readonly agentVersions: PromiseMemo<string, Record<string, string>>;
  readonly counts: { completed: number; failed: number };
}

/** Run a worker until `signal` aborts; see the module comment. */
export async function runQueueWorker(options: QueueWorkerOptions): Promise<QueueWorkerSummary> {
  const { connection, label } = queueConnectionOf(options.queue);
  const log = options.onLog ?? (() => undefined);
  const env = options.env ?? process.env;
  const { UnrecoverableError, Worker } = await loadBullmq();
  const client = await createRedisClient(connection, label, { onConnectionEvent: log });
  // The worker's own keys come from `env`, which need not be this process's environment.
  registerEnvironmentSecrets(env);
  const state: WorkerState = {
    options,
    log,
    env,
    cacheDir: options.cacheDir ?? defaultCacheDir(env),
    slots: new Semaphore(options.concurrency ?? 1),
    force: new AbortController(),
    workerEndpoint: endpointFromEnvironment(env),
    UnrecoverableError,
    sandboxes: new PromiseMemo(),
    runs: new PromiseMemo(),
    predictions: new PromiseMemo(),
    agentVersions: new PromiseMemo(),
    counts: { completed: 0, failed: 0 },
  };
  options.forceSignal?.addEventListener("abort", () => state.force.abort(), { once: true });
  const workers = new Map<string, Worker>();
  const attach = workerAttacher(state, { Worker, client, label, workers });
  try {
    await pollRegistry(state, { client, label, workers, attach });
  } finally {
    await closeWorkers(state, [...workers.values()]);
    for (const promise of state.sandboxes.values()) {
      const sandbox = await promise.catch(() => undefined);
      await sandbox?.dispose?.();
    }
    client.disconnect();
  }
  return { completed: state.counts.completed, failed: state.counts.failed };
}

interface RegistryWatch {
  readonly client: RedisClient;
  readonly label: string;
  readonly workers: ReadonlyMap<string, unknown>;
  readonly attach: (group: string) => Promise<void>;
}

/**
 * Read the registry of queues every `registryPollMs` and attach a BullMQ worker to each new one,
 * until `signal` aborts. Commands wait through an outage, so a stop request does not wait for them.
 */
async function pollRegistry(state: WorkerState, watch: RegistryWatch): Promise<void> {
  const { options, log } = state;
  const registry = registryKeys(options.prefix ?? DEFAULT_QUEUE_PREFIX);
  const stopped = options.signal === undefined ? undefined : whenAborted(options.signal);
  const refresh = async (): Promise<void> => {
    const groups = await watch.client.smembers(registry.groups);
    for (const group of groups.sort()) {
      if (/^[A-Za-z0-9._-]+$/.test(group)) await watch.attach(group);
    }
  };
  const refreshUnlessStopped = async (): Promise<void> => {
    const refreshed = refresh().catch((error: unknown) =>
      log(`could not read the queue registry: ${messageOf(error)}`),
    );
    await (stopped === undefined ? refreshed : Promise.race([refreshed, stopped]));
  };
  await refreshUnlessStopped();
  if (watch.workers.size === 0)
    log(`worker on ${watch.label}: waiting for a coordinator to enqueue runs`);
  const pollMs = options.registryPollMs ?? 2_000;
  while (!isAborted(options.signal)) {
    await sleep(pollMs, options.signal);
    if (isAborted(options.signal)) break;
    await refreshUnlessStopped();
  }
  log("stopping: finishing the runs in progress (interrupt again to abandon them)");
}

/**
 * Graceful: wait for the runs in progress. Forced (second signal, or Redis gone for good): stop
 * waiting; the interrupted jobs' locks expire and other workers take them over.
 */
async function closeWorkers(state: WorkerState, workers: readonly Worker[]): Promise<void> {
  const { force, log } = state;
  const closing = Promise.all(workers.map((worker) => worker.close(force.signal.aborted))).catch(
    (error: unknown) => log(`closing the queue workers: ${messageOf(error)}`),
  );
  await Promise.race([closing, whenAborted(force.signal)]);
  if (!force.signal.aborted) return;
  log("abandoning the runs in progress (other workers take them over once their locks expire)");
  await Promise.race([
    Promise.all(
      // close() already runs (gracefully) and would return the same promise: drop the
      // connections instead, which ends the reconnect loops that keep the process alive.
      workers.map((worker) => worker.disconnect().catch(() => undefined)),
    ),
    sleep(2_000),
  ]);
}

/** Attaches one BullMQ worker per rate-limit group, with the group's limit from the registry. */
function workerAttacher(
  state: WorkerState,
  bull: {
    readonly Worker: typeof Worker;
    readonly client: RedisClient;
    readonly label: string;
    readonly workers: Map<string, Worker>;
  },
): (group: string) => Promise<void> {
  const { options, log } = state;
  const prefix = options.prefix ?? DEFAULT_QUEUE_PREFIX;
  const registry = registryKeys(prefix);
  const concurrency = options.concurrency ?? 1;
  const lockDuration = options.lockDurationMs ?? 30_000;
  const workerName = options.name ?? `${hostname()}:${process.pid}`;
  const logOnce = onceAMinute(log);
  return async (group) => {
    if (bull.workers.has(group)) return;
    const limiter = await rateLimitOf(state, bull.client, registry.limits, group);
    const worker = new bull.Worker(queueNameOf(group), (job) => processJob(state, job), {
      // Stored on each job it takes (`processedBy`): which machine and process ran a key.
      name: workerName,
      connection: bull.client,
      prefix,
      concurrency,
      lockDuration,
      stalledInterval: options.stalledIntervalMs ?? lockDuration,
      maxStalledCount: options.maxStalledCount ?? 3,
      ...(limiter === undefined ? {} : { limiter }),
    });
    worker.on("error", (error) => logOnce(`queue ${group}: ${messageOf(error)}`));
    worker.on("completed", () => {
      state.counts.completed += 1;
    });
    worker.on("failed", (job, error) => {
      state.counts.failed += 1;
      log(`job ${job?.id ?? "?"} failed on this worker: ${messageOf(error)}`);
    });
    bull.workers.set(group, worker);
    log(
      `worker on ${bull.label}: queue ${queueNameOf(group)}${limiter === undefined ? "" : ` (at most ${limiter.max} runs per ${limiter.duration / 1000} s over all workers)`}, concurrency ${concurrency}`,
    );
  };
}

/** The group's rate limit from the registry; a malformed one is logged and ignored. */
async function rateLimitOf(
  state: WorkerState,
  client: RedisClient,
  limitsKey: string,
  group: string,
): Promise<{ max: number; duration: number } | undefined> {
  const limitText = await client.hget(limitsKey, group);
  if (limitText === null) return undefined;
  const parsed = rateLimitSchema.safeParse(safeJson(limitText));
  if (parsed.success) return { max: parsed.data.max, duration: parsed.data.durationMs };
  state.log(`ignoring the malformed rate limit of ${group} in the registry: ${limitText}`);
  return undefined;
}

/** The job's predictions on this worker, only if their digest is the coordinator's. */
function predictionsFor(state: WorkerState, data: QueueJobData): Promise<Predictions> | undefined {
  const recorded = data.predictions;
  if (recorded === undefined) return undefined;
  return state.predictions.get(recorded.digest, async () => {
    const predictions = await Predictions.read(resolve(recorded.path));
    if (predictions.digest !== recorded.digest) {
      throw new InfrastructureError(
        "bench.queue-predictions-differ",
        `predictions ${recorded.path} on this worker differ from the coordinator's (digest ${predictions.digest.slice(0, 12)}, expected ${recorded.digest.slice(0, 12)})`,
      );
    }
    return predictions;
  });
}

/** The suite, harnesses, bases and fingerprints of a job's run, loaded once per settings. */
function loadedRunFor(
  state: WorkerState,
  data: QueueJobData,
  sandbox: SandboxV1,
): Promise<LoadedRun> {
  // Everything the loaded suite, its harnesses and bases depend on, so one job's settings
  // never serve another job that asked for different ones.
  const settings = JSON.stringify([
    data.variants ?? [],
    data.distractors ?? [],
    data.prices ?? {},
    data.baseImages ?? {},
    data.setupNetwork ?? "",
  ]);
  const cacheKey = `${data.runId}|${data.suite.digest}|${data.predictions?.digest ?? ""}|${sandbox.kind}|${settings}`;
  return state.runs.get(cacheKey, () => loadRun(state, data, sandbox));
}

async function loadRun(
  state: WorkerState,
  data: QueueJobData,
  sandbox: SandboxV1,
): Promise<LoadedRun> {
  const loadedSuite = await loadSuite(resolve(data.suite.path));
  const digest = await treeDigest(loadedSuite.root);
  if (digest !== data.suite.digest) {
    throw new InfrastructureError(
      "bench.queue-suite-differs",
      `suite ${data.suite.path} on this worker differs from the coordinator's (digest ${digest.slice(0, 12)}, expected ${data.suite.digest.slice(0, 12)})`,
    );
  }
  const suite = await withDistractors(
    await withVariants(loadedSuite, await checkedVariants(data.variants ?? [])),
    await checkedDistractors(data.distractors ?? []),
  );
  const predictions = await predictionsFor(state, data);
  const harnessOf = harnessesFor(suite, predictions, state.options.harnessFor, data.prices);
  const baseFor = skillBases({
    sandbox,
    cacheDir: state.cacheDir,
    ...definedFields({ baseImages: data.baseImages, setupNetwork: data.setupNetwork }),
    onLog: state.log,
  });
  const agent = data.configuration.agent;
  const versions = await state.agentVersions.get(agent, () => agentVersions([data.configuration]));
  const fingerprintOf = fingerprints({
    baseFor,
    harnessName: (configuration) => harnessOf(configuration).name,
    modelSpec: modelSpecOf,
    agentVersions: versions,
    sandbox: sandbox.kind,
    ...(predictions === undefined
      ? {}
      : { replayPatch: (run: PlannedRun) => predictions.patchFor({ ...run.key }) }),
  });
  return { suite, harnessOf, baseFor, fingerprintOf };
}

/**
 * The job's data, or an unrecoverable error (no other worker would do better): not a run job,
 * `--sandbox unsafe` without `--allow-unsafe`, or a base URL this worker would send its key to
 * without having been told to.
 */
function acceptedJob(state: WorkerState, job: Job): QueueJobData {
  const { options, UnrecoverableError } = state;
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
  // Both places a job can name an endpoint: its `endpoint` and an `openai-compatible:…@url`
  // model spec in its configuration.
  const own = state.workerEndpoint(data.configuration);
  for (const [where, url] of [
    ["its endpoint", data.endpoint?.baseUrl],
    ["its model spec", specBaseUrlOf(data.configuration)],
  ] as const) {
    const keyProblem = keyDestinationProblem(url, own, options.acceptBaseUrls ?? []);
    if (keyProblem !== undefined)
      throw new UnrecoverableError(`job ${job.id}: ${where} ${keyProblem}`);
  }
  return data;
}

/** One job, under the process-wide concurrency permit; errors redacted before BullMQ keeps them. */
async function processJob(state: WorkerState, job: Job): Promise<QueueJobResult> {
  const data = acceptedJob(state, job);
  const release = await state.slots.acquire();
  try {
    const result = await executeJob(state, job, data);
    state.options.onJobDone?.(data, result.outcome.kind);
    // The return value is stored in Redis as it is: redacted here, not only when the
    // coordinator stores it (a failing check's message can quote a key the agent printed).
    return redactKnownSecrets(result, state.env);
  } catch (error) {
    if (isSkillsmithError(error) && (error.family === "usage" || error.family === "input")) {
      // The suite or predictions are wrong for everyone: retrying elsewhere cannot help.
      throw redactedError(
        new state.UnrecoverableError(`job ${job.id}: ${error.message}`),
        state.env,
      );
    }
    // BullMQ keeps the message (failedReason) and the stack trace in the job's hash.
    throw redactedError(error, state.env);
  } finally {
    release();
  }
}

/** The run a job names, in this worker's copy of the suite. */
async function plannedRunOf(
  state: WorkerState,
  job: Job,
  data: QueueJobData,
  loaded: LoadedRun,
): Promise<PlannedRun> {
  const skill = loaded.suite.skills.find((candidate) => candidate.id === data.key.skill);
  const requirement = skill?.requirements.find(
    (candidate) => candidate.id === data.key.requirement,
  );
  if (skill === undefined || requirement === undefined) {
    throw new state.UnrecoverableError(
      `job ${job.id}: the suite has no ${data.key.skill}/${data.key.requirement}`,
    );
  }
  return { key: data.key, configuration: data.configuration, skill, requirement };
}

/** Reuse an earlier run, or execute this one with retries, as the in-process runner would. */
async function executeJob(
  state: WorkerState,
  job: Job,
  data: QueueJobData,
): Promise<QueueJobResult> {
  const sandbox = await state.sandboxes.get(data.sandbox, () =>
    openSandbox(data.sandbox, state.log),
  );
  const loaded = await loadedRunFor(state, data, sandbox);
  const run = await plannedRunOf(state, job, data, loaded);
  if (data.reuse !== undefined && run.key.arm === "without") {
    // Reuse is decided by this worker's fingerprint of the run (its base, its agent CLI), so
    // an earlier run stands in only for the run this worker would have executed.
    const fingerprint = await loaded.fingerprintOf(run);
    if (data.reuse.candidates.includes(fingerprint.digest)) {
      return {
        format: QUEUE_RESULT_FORMAT,
        infraAttempts: [],
        outcome: { kind: "reusable", fingerprint },
      };
    }
  }
  const infraAttempts: Array<Omit<AttemptRecord, "outcome">> = [];
  const ledger: AttemptLedger = {
    attemptCount: () => data.priorAttempts + infraAttempts.length,
    recordInfraAttempt: (record) => {
      infraAttempts.push(record);
    },
  };
  const outcome = await executeWithRetries(run, jobContext(state, data, sandbox, loaded), {
    ledger,
    maxAttempts: data.maxAttempts,
    // Stored with the result, as the in-process runner does: `--reuse` matches on it.
    record: async (result) => ({ ...result, fingerprint: await loaded.fingerprintOf(run) }),
    onWarning: state.log,
  });
  if (outcome.kind === "aborted") {
    // Not an outcome of the run: the job goes back to the queue for another worker.
    throw new InfrastructureError(
      "bench.queue-worker-stopped",
      "worker stopped while the run was in progress",
      { retryable: true },
    );
  }
  return {
    format: QUEUE_RESULT_FORMAT,
    infraAttempts: infraAttempts.map((record) => ({ ...record })),
    outcome:
      outcome.kind === "scored"
        ? { kind: "scored", result: outcome.result }
        : { kind: "failed", attempts: outcome.failure.attempts, error: outcome.failure.error },
  };
}

/** What executing the job's run needs on this worker. */
function jobContext(
  state: WorkerState,
  data: QueueJobData,
  sandbox: SandboxV1,
  loaded: LoadedRun,
): ExecutionContext {
  const coordinatorBaseUrl = data.endpoint?.baseUrl;
  return {
    sandbox,
    baseFor: loaded.baseFor,
    harnessOf: loaded.harnessOf,
    // The key comes from this machine only; the base URL too when this machine sets one.
    modelEndpoint: (configuration) => {
      const own = state.workerEndpoint(configuration);
      const baseUrl = own?.baseUrl ?? coordinatorBaseUrl;
      return {
        ...(baseUrl === undefined ? {} : { baseUrl }),
        ...(own?.apiKey === undefined ? {} : { apiKey: own.apiKey }),
      };
    },
    ...(data.prices === undefined ? {} : { prices: data.prices }),
    signal: state.force.signal,
  };
}

/**
 * Prepared bases of a suite's skills as the in-process runner prepares them (`prepareSkillBase`
 * with the run's base images and setup network), each once per process on first use; a failed
 * preparation is retried by the next run that needs it.
 */
function skillBases(options: SkillEnvironmentOptions): ExecutionContext["baseFor"] {
  const bases = new PromiseMemo<string, PreparedBase>();
  return (skill) =>
    bases.get(skill.id, () => prepareSkillBase(skill, options).then((prepared) => prepared.base));
}

/**
 * A job's variants, each only if the folder at its path on this worker has the tree digest the
 * coordinator recorded. A job can name any path; the digest makes it name only a folder whose
 * content its writer already knows. One message whether the folder is missing, unreadable or
 * different, and never this folder's digest: a crafted job learns nothing about the worker's disk.
 */
async function checkedVariants(variants: readonly QueueJobVariant[]): Promise<VariantOption[]> {
  const checked: VariantOption[] = [];
  for (const variant of variants) {
    // An Agent Skills folder first: a job naming `/` must not make the worker hash its disk.
    const digest = await checkVariantFolder(variant.folder, `variant ${variant.name}`)
      .then(() => treeDigest(variant.folder))
      .catch(() => undefined);
    if (digest !== variant.digest) {
      throw new InfrastructureError(
        "bench.queue-variant-differs",
        `variant ${variant.name}: ${variant.folder} on this worker is missing or differs from the coordinator's (expected digest ${variant.digest.slice(0, 12)})`,
      );
    }
    checked.push({
      ...(variant.skill === undefined ? {} : { skill: variant.skill }),
      name: variant.name,
      folder: variant.folder,
    });
  }
  return checked;
}

/** A job's distractors, each only if its folder here has the digest the coordinator recorded. */
async function checkedDistractors(distractors: readonly QueueJobDistractor[]): Promise<string[]> {
  const checked: string[] = [];
  for (const distractor of distractors) {
    const digest = await checkVariantFolder(distractor.folder, "distractor")
      .then(() => treeDigest(distractor.folder))
      .catch(() => undefined);
    if (digest !== distractor.digest) {
      throw new InfrastructureError(
        "bench.queue-distractor-differs",
        `distractor ${distractor.folder} on this worker is missing or differs from the coordinator's (expected digest ${distractor.digest.slice(0, 12)})`,
      );
    }
    checked.push(distractor.folder);
  }
  return checked;
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

/** A base URL as compared: without trailing slashes, so `…/v1/` and `…/v1` are one. */
function comparableUrl(url: string): string {
  return url.replace(/\/+$/, "");
}

/** The base URL an `openai-compatible:<model>@<url>` spec names; undefined for any other spec. */
function specBaseUrlOf(configuration: QueueJobData["configuration"]): string | undefined {
  try {
    return parseModelSpec(modelSpecOf(configuration)).baseUrl;
  } catch {
    // Not a spec this worker can parse: the run itself fails on it, and sends nothing anywhere.
    return undefined;
  }
}

/**
 * Why this worker refuses a base URL a job names, or undefined. Refused: the run talks to a
 * model (`own` is defined), this worker sets no base URL of its own (which would win), and the
 * URL is not one it was told to accept — whatever key the run would use (this worker's
 * environment or config file) would go there. The URL is not quoted back (it may carry a token).
 */
export function keyDestinationProblem(
  jobBaseUrl: string | undefined,
  own: { readonly baseUrl?: string; readonly apiKey?: string } | undefined,
  accepted: readonly string[],
): string | undefined {
  if (jobBaseUrl === undefined || own === undefined || own.baseUrl !== undefined) return undefined;
  if (accepted.some((url) => comparableUrl(url) === comparableUrl(jobBaseUrl))) return undefined;
  let origin = "an unrecognised URL";
  try {
    origin = new URL(jobBaseUrl).origin;
  } catch {
    // Not a URL at all: named as such, and refused like any other.
  }
  return `names a model base URL at ${origin} that this worker does not accept, and the run would send it this worker's API key; start the worker with --accept-base-url <that URL>, or set the provider's base URL in the worker's environment`;
}
