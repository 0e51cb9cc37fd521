/**
 * What travels through Redis: the job a coordinator enqueues for one run key, and what a worker
 * returns. Both are parsed with zod on the receiving side (Redis is shared, its content is not
 * trusted). Job data never carries API keys: workers read their own from their environment.
 */
import { createHash } from "node:crypto";
import { z } from "zod";
import { UsageError } from "../../core/errors.js";
import { formatTag } from "../../core/format-tag.js";
import { formatTagSchema } from "../../core/format-tag-schema.js";
import { parseResult } from "../../core/parse.js";
import type { SetupNetworkChoice } from "../../env/index.js";
import type { ModelPrice } from "../../model/index.js";
import { redactKnownSecrets } from "../../model/redact.js";
import { canonicalJson } from "../run/fingerprint.js";
import type { ModelEndpoint } from "../run/model-endpoint.js";
import { modelSpecOf } from "../run/model-endpoint.js";
import type { SandboxKind } from "../run/options.js";
import type { PlannedRun } from "../run/plan.js";
import {
  type AttemptRecord,
  formatRunKey,
  type RunFingerprint,
  type RunKey,
  type RunResult,
} from "../store/results.js";
import { type Configuration, configurationSchema, idSchema } from "../suite/schema.js";

// Version 2 added base images, prices, setup network, variants and reuse candidates to the job,
// and fingerprints and the `reusable` outcome to the result. A version-1 worker refuses a
// version-2 job instead of silently dropping the fields it does not know (zod strips them).
export const QUEUE_JOB_FORMAT = formatTag("queue-job", 2);
export const QUEUE_RESULT_FORMAT = formatTag("queue-result", 2);
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

const sha256Schema = z.string().regex(/^[a-f0-9]{64}$/);

/**
 * An image a task's Dockerfile is built `FROM` on the worker. Written into the Dockerfile, so
 * no whitespace or anything else that could end the `FROM` line and start an instruction of its
 * own (a newline followed by `RUN …`): the characters of image references (`host:port/name:tag`,
 * `@sha256:…`) only.
 */
const localImageSchema = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._/:@-]{0,254}$/);
/** The `FROM` image it replaces: only looked up, never written, but still one word. */
const fromImageSchema = z.string().regex(/^[^\s]{1,255}$/);

/** A model's price per million tokens (`model.prices` of the config), as the config checks it. */
const priceSchema = z.strictObject({
  input: z.number().nonnegative().finite(),
  cachedInput: z.number().nonnegative().finite().optional(),
  output: z.number().nonnegative().finite(),
});

/**
 * A command-line variant (`--variant [skill:]name=folder`): the worker installs `folder` from
 * its own disk only when the folder's tree digest is `digest`, so a job can name only a folder
 * whose exact content its writer already knows (see the README's Security section).
 */
const variantSchema = z.strictObject({
  skill: idSchema.optional(),
  name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/),
  folder: z.string().min(2).startsWith("/"),
  digest: sha256Schema,
});

/** A command-line distractor (`--distractor <dir>`): checked by its tree digest like a variant. */
const distractorSchema = z.strictObject({
  folder: z.string().min(2).startsWith("/"),
  digest: sha256Schema,
});

export const queueJobSchema = z.object({
  format: formatTagSchema(QUEUE_JOB_FORMAT),
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
  /** `--base-image`: a task Dockerfile's `FROM` image → the local image it is built from. */
  baseImages: z.record(fromImageSchema, localImageSchema).optional(),
  /** `model.prices` of the coordinator's config: what a run's tokens cost (Codex, builtin). */
  prices: z.record(z.string().min(1).max(200), priceSchema).optional(),
  /** `--setup-network` of the coordinator, for the bases the worker prepares. */
  setupNetwork: z.enum(["auto", "on", "off"]).optional(),
  /** Variants given on the coordinator's command line, added to the suite the worker loads. */
  variants: z.array(variantSchema).max(64).optional(),
  /** Distractors given on the coordinator's command line, installed in every arm. */
  distractors: z.array(distractorSchema).max(64).optional(),
  /**
   * `--reuse` (an unassisted run only): fingerprint digests of earlier runs the coordinator can
   * copy for this key. A worker whose own fingerprint of the run is one of them answers
   * `reusable` instead of executing it; the coordinator then copies that run.
   */
  reuse: z.strictObject({ candidates: z.array(sha256Schema).max(1_000) }).optional(),
});
export type QueueJobData = z.output<typeof queueJobSchema>;
export type QueueJobVariant = z.output<typeof variantSchema>;
export type QueueJobDistractor = z.output<typeof distractorSchema>;

const attemptSchema = runKeySchema.extend({
  attempt: z.number().int().positive(),
  error: z.string().optional(),
  costUsd: z.number(),
  startedAt: z.string(),
  finishedAt: z.string(),
});

/**
 * A run's fingerprint as the worker computed it: the digest must be the hash of the inputs
 * beside it, or a later `--reuse` of this run directory would match on a digest that does not
 * say what the run was.
 */
const fingerprintSchema = z
  .object({ digest: sha256Schema, inputs: z.record(z.string(), z.unknown()) })
  .refine((fingerprint) => sha256Of(canonicalJson(fingerprint.inputs)) === fingerprint.digest, {
    message: "the fingerprint's digest is not the hash of its inputs",
  });

/** A result row as the worker built it; the store checks the rest of its shape on insert. */
const resultSchema = runKeySchema
  .extend({
    status: z.enum(["completed", "timeout", "agent_error"]),
    passRatio: z.number().min(0).max(1),
    attempts: z.number().int().positive(),
    fingerprint: fingerprintSchema.optional(),
  })
  .passthrough();

const queueResultSchema = z.object({
  format: formatTagSchema(QUEUE_RESULT_FORMAT),
  /** Attempts lost to infrastructure on the worker before the outcome; never scored. */
  infraAttempts: z.array(attemptSchema),
  outcome: z.discriminatedUnion("kind", [
    z.object({ kind: z.literal("scored"), result: resultSchema }),
    /** The run's fingerprint on the worker is one of the job's reuse candidates: not executed. */
    z.object({ kind: z.literal("reusable"), fingerprint: fingerprintSchema }),
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
    | { readonly kind: "reusable"; readonly fingerprint: RunFingerprint }
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

function sha256Of(text: string): string {
  return createHash("sha256").update(text).digest("hex");
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
      "bench.rate-limit-invalid",
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
    readonly baseImages?: Readonly<Record<string, string>>;
    readonly prices?: Readonly<Record<string, ModelPrice>>;
    readonly setupNetwork?: SetupNetworkChoice;
    readonly variants?: ReadonlyArray<QueueJobVariant>;
    readonly distractors?: ReadonlyArray<QueueJobDistractor>;
    /** Fingerprint digests of the earlier runs `--reuse` could copy for this key. */
    readonly reuseCandidates?: readonly string[];
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
    ...(inputs.baseImages === undefined || Object.keys(inputs.baseImages).length === 0
      ? {}
      : { baseImages: { ...inputs.baseImages } }),
    ...(inputs.prices === undefined || Object.keys(inputs.prices).length === 0
      ? {}
      : { prices: structuredClone(inputs.prices) as Record<string, ModelPrice> }),
    ...(inputs.setupNetwork === undefined ? {} : { setupNetwork: inputs.setupNetwork }),
    ...(inputs.variants === undefined || inputs.variants.length === 0
      ? {}
      : { variants: inputs.variants.map((variant) => ({ ...variant })) }),
    ...(inputs.distractors === undefined || inputs.distractors.length === 0
      ? {}
      : { distractors: inputs.distractors.map((distractor) => ({ ...distractor })) }),
    ...(inputs.reuseCandidates === undefined
      ? {}
      : { reuse: { candidates: [...inputs.reuseCandidates] } }),
  });
}
