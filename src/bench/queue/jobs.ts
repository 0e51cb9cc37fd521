/**
 * What travels through Redis: the job a coordinator enqueues for one run key, and what a worker
 * returns. Both are parsed with zod on the receiving side (Redis is shared, its content is not
 * trusted). Job data never carries API keys: workers read their own from their environment.
 */
import { z } from "zod";
import { UsageError } from "../../core/errors.js";
import { parseResult } from "../../core/parse.js";
import { redactKnownSecrets } from "../../model/redact.js";
import type { ModelEndpoint } from "../run/model-endpoint.js";
import { modelSpecOf } from "../run/model-endpoint.js";
import type { SandboxKind } from "../run/options.js";
import type { PlannedRun } from "../run/plan.js";
import { type AttemptRecord, formatRunKey, type RunKey, type RunResult } from "../store/results.js";
import { type Configuration, configurationSchema, idSchema } from "../suite/schema.js";

export const QUEUE_JOB_FORMAT = "skillsmith-queue-job/1";
export const QUEUE_RESULT_FORMAT = "skillsmith-queue-result/1";
/** BullMQ's key prefix of every queue of skillsmith. */
export const DEFAULT_QUEUE_PREFIX = "skillsmith";

const runKeySchema = z.object({
  config: z.string().min(1),
  skill: z.string().min(1),
  requirement: z.string().min(1),
  arm: z.union([
    z.enum(["without", "with"]),
    z.custom<`variant:${string}`>(
      (value) => typeof value === "string" && /^variant:[A-Za-z0-9][A-Za-z0-9._-]*$/.test(value),
    ),
  ]),
  repeat: z.number().int().positive(),
});

export const queueJobSchema = z.object({
  format: z.literal(QUEUE_JOB_FORMAT),
  /** Names the run directory's queue namespace (`queue.json`), so two runs never share a key. */
  runId: z.string().regex(/^[a-f0-9]{16,64}$/),
  /** A path every worker can read (a shared or identical checkout), and its tree digest. */
  suite: z.object({ path: z.string().min(1), digest: z.string().min(1) }),
  configuration: configurationSchema,
  key: runKeySchema,
  predictions: z.object({ path: z.string().min(1), digest: z.string().min(1) }).optional(),
  /** A sandbox kind the worker creates by name: built-in, or registered in the worker's program. */
  sandbox: idSchema,
  /** The coordinator's model base URL, used when the worker's environment sets none. */
  endpoint: z.strictObject({ baseUrl: z.string().min(1).optional() }).optional(),
  maxAttempts: z.number().int().positive(),
  /** Attempts the run directory held for this key when the job was enqueued. */
  priorAttempts: z.number().int().min(0),
});
export type QueueJobData = z.output<typeof queueJobSchema>;

const attemptSchema = runKeySchema.extend({
  attempt: z.number().int().positive(),
  error: z.string().optional(),
  costUsd: z.number(),
  startedAt: z.string(),
  finishedAt: z.string(),
});

/** A result row as the worker built it; the store checks the rest of its shape on insert. */
const resultSchema = runKeySchema
  .extend({
    status: z.enum(["completed", "timeout", "agent_error"]),
    passRatio: z.number().min(0).max(1),
    attempts: z.number().int().positive(),
  })
  .passthrough();

const queueResultSchema = z.object({
  format: z.literal(QUEUE_RESULT_FORMAT),
  /** Attempts lost to infrastructure on the worker before the outcome; never scored. */
  infraAttempts: z.array(attemptSchema),
  outcome: z.discriminatedUnion("kind", [
    z.object({ kind: z.literal("scored"), result: resultSchema }),
    z.object({
      kind: z.literal("failed"),
      attempts: z.number().int().min(0),
      error: z.string(),
    }),
  ]),
});

/** A worker's return value for one job. */
export interface QueueJobResult {
  readonly format: typeof QUEUE_RESULT_FORMAT;
  readonly infraAttempts: ReadonlyArray<Omit<AttemptRecord, "outcome">>;
  readonly outcome:
    | { readonly kind: "scored"; readonly result: RunResult }
    | { readonly kind: "failed"; readonly attempts: number; readonly error: string };
}

/**
 * Check a job's return value. The key, status and pass ratio are checked here; the results
 * store's column constraints check the rest when the row is inserted.
 */
export function parseQueueResult(
  value: unknown,
):
  | { readonly ok: true; readonly value: QueueJobResult }
  | { readonly ok: false; readonly error: string } {
  const parsed = parseResult(queueResultSchema, value);
  if (!parsed.ok)
    return {
      ok: false,
      error: `not a skillsmith run result (${parsed.error.field ?? ""}: ${parsed.error.message})`,
    };
  return { ok: true, value: parsed.value as unknown as QueueJobResult };
}

/**
 * The BullMQ job id of a run key: the key's text form inside the run's namespace. BullMQ
 * refuses `:` in custom ids, so it (and the escape character) are percent-encoded.
 */
export function jobIdOf(runId: string, key: RunKey): string {
  return `${runId}/${formatRunKey(key).replace(/%/g, "%25").replace(/:/g, "%3A")}`;
}

/** Jobs of one run all start with this. */
export function jobIdPrefix(runId: string): string {
  return `${runId}/`;
}

/**
 * The rate-limit group of a configuration: its provider and model (`anthropic:claude-x` →
 * `anthropic.claude-x`), so every configuration on one model shares one limit. Agents without
 * a model (replay, none, oracle) form a group of their own.
 */
export function rateLimitGroupOf(configuration: Configuration): string {
  return groupName(modelSpecOf(configuration));
}

function groupName(spec: string): string {
  return spec.replace(/:/g, ".").replace(/[^A-Za-z0-9._-]/g, "-");
}

/** The BullMQ queue (one per rate-limit group, shared by every run on this Redis). */
export function queueNameOf(group: string): string {
  return `runs.${group}`;
}

/** Redis keys of the registry workers read to find the queues and their limits. */
export function registryKeys(prefix: string): { groups: string; limits: string } {
  return { groups: `${prefix}:registry:groups`, limits: `${prefix}:registry:limits` };
}

export interface RateLimit {
  /** At most this many runs start… */
  readonly max: number;
  /** …per this many milliseconds, over all workers. */
  readonly durationMs: number;
}

export const rateLimitSchema = z.object({
  max: z.number().int().positive(),
  durationMs: z.number().int().positive(),
});

/**
 * `--rate-limit <provider:model>=<max>/<seconds>s` (e.g. `anthropic:claude-sonnet-4-5=30/60s`;
 * the `s` is optional). Returns the group and its limit.
 */
export function parseRateLimit(text: string): { group: string; limit: RateLimit } {
  const match = /^(.+)=(\d+)\/(\d+(?:\.\d+)?)s?$/.exec(text.trim());
  const max = Number(match?.[2]);
  const seconds = Number(match?.[3]);
  if (match === null || !(max >= 1) || !(seconds > 0)) {
    throw new UsageError(
      "rate-limit-invalid",
      `--rate-limit expects <provider:model>=<runs>/<seconds>s, e.g. anthropic:claude-sonnet-4-5=30/60s (got "${text}")`,
    );
  }
  return {
    group: groupName(match[1] ?? ""),
    limit: { max, durationMs: Math.round(seconds * 1000) },
  };
}

/** Everything a worker needs to rebuild and execute one run; see `queueJobSchema`. */
export function jobDataFor(
  run: PlannedRun,
  inputs: {
    readonly runId: string;
    readonly suite: { readonly path: string; readonly digest: string };
    readonly predictions?: { readonly path: string; readonly digest: string };
    readonly sandbox: SandboxKind;
    readonly endpoint?: ModelEndpoint;
    readonly maxAttempts: number;
    readonly priorAttempts: number;
  },
): QueueJobData {
  const baseUrl = inputs.endpoint?.baseUrl;
  // Redis is a store like the results file: whatever a field of the job carries (a key in a
  // base URL's query, a configuration written with one), known secrets do not reach it.
  return redactKnownSecrets({
    format: QUEUE_JOB_FORMAT,
    runId: inputs.runId,
    suite: { path: inputs.suite.path, digest: inputs.suite.digest },
    configuration: run.configuration,
    key: { ...run.key },
    ...(inputs.predictions === undefined
      ? {}
      : { predictions: { path: inputs.predictions.path, digest: inputs.predictions.digest } }),
    sandbox: inputs.sandbox,
    // Only the base URL: the key stays on the coordinator's machine (see the module comment).
    ...(baseUrl === undefined ? {} : { endpoint: { baseUrl } }),
    maxAttempts: inputs.maxAttempts,
    priorAttempts: inputs.priorAttempts,
  });
}
