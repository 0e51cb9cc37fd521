/**
 * Retries for model calls: exponential backoff with jitter on failures that another attempt can
 * fix (429, 408, 5xx, dropped or refused connections), honouring `Retry-After`. When the budget is
 * spent the failure becomes an `InfrastructureError` — never confused with a model's bad answer.
 */
import { InfrastructureError, isSkillsmithError } from "../core/errors.js";

export interface RetryOptions {
  /** Retries after the first attempt. */
  readonly maxRetries?: number;
  readonly initialDelayMs?: number;
  readonly maxDelayMs?: number;
  /** Upper bound on a server's `Retry-After`, so a hostile value cannot stall a run. */
  readonly maxRetryAfterMs?: number;
  /** Source of jitter in [0, 1); injectable for reproducible schedules. */
  readonly random?: () => number;
  readonly sleep?: (milliseconds: number) => Promise<void>;
  /** Called before each retry (for logs and counters). */
  readonly onRetry?: (event: { attempt: number; delayMs: number; failure: FailureClass }) => void;
}

export const defaultRetryOptions = {
  maxRetries: 5,
  initialDelayMs: 500,
  maxDelayMs: 30_000,
  maxRetryAfterMs: 60_000,
} as const;

export interface FailureClass {
  readonly retryable: boolean;
  readonly statusCode?: number;
  /** From `Retry-After` / `retry-after-ms`, when the server sent one. */
  readonly retryAfterMs?: number;
  readonly reason: string;
}

const retryableCodes = new Set([
  "ECONNRESET",
  "ECONNREFUSED",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "EAI_AGAIN",
  "UND_ERR_SOCKET",
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT",
]);

function errorCodes(error: unknown): string[] {
  const codes: string[] = [];
  let current: unknown = error;
  for (let depth = 0; depth < 6 && typeof current === "object" && current !== null; depth += 1) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string") codes.push(code);
    current = (current as { cause?: unknown }).cause;
  }
  return codes;
}

export function parseRetryAfter(
  headers: Readonly<Record<string, string>> | undefined,
  now = Date.now(),
): number | undefined {
  if (headers === undefined) return undefined;
  const lower = Object.fromEntries(
    Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]),
  );
  const milliseconds = Number(lower["retry-after-ms"]);
  if (lower["retry-after-ms"] !== undefined && Number.isFinite(milliseconds) && milliseconds >= 0)
    return milliseconds;
  const value = lower["retry-after"];
  if (value === undefined) return undefined;
  const seconds = Number(value);
  if (value.trim() !== "" && Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * Decide whether a failed call is worth repeating. Asynchronous because it imports the AI SDK
 * (for `APICallError`) only when a call has failed, not with this module.
 */
export async function classifyFailure(error: unknown): Promise<FailureClass> {
  if (isSkillsmithError(error)) return { retryable: error.retryable, reason: error.message };
  const { APICallError } = await import("ai");
  if (APICallError.isInstance(error)) {
    const statusCode = error.statusCode;
    const retryAfterMs = parseRetryAfter(error.responseHeaders);
    const base = {
      ...(statusCode === undefined ? {} : { statusCode }),
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
      reason: error.message,
    };
    if (statusCode === undefined)
      return {
        ...base,
        retryable: error.isRetryable || errorCodes(error).some((code) => retryableCodes.has(code)),
      };
    return {
      ...base,
      retryable:
        statusCode === 408 || statusCode === 409 || statusCode === 429 || statusCode >= 500,
    };
  }
  const codes = errorCodes(error);
  const message = error instanceof Error ? error.message : String(error);
  if (codes.some((code) => retryableCodes.has(code))) return { retryable: true, reason: message };
  // A connection cut while a response streams in surfaces as a terminated body or a bare fetch failure.
  if (error instanceof TypeError && /fetch failed|terminated|other side closed/i.test(message))
    return { retryable: true, reason: message };
  return { retryable: false, reason: message };
}

function defaultSleep(milliseconds: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, milliseconds));
}

/** Backoff before retry number `attempt` (1-based): exponential, with jitter in [50%, 100%]. */
export function backoffDelay(
  attempt: number,
  options: RetryOptions,
  failure: FailureClass,
): number {
  const initial = options.initialDelayMs ?? defaultRetryOptions.initialDelayMs;
  const maximum = options.maxDelayMs ?? defaultRetryOptions.maxDelayMs;
  const random = options.random ?? Math.random;
  const exponential = Math.min(maximum, initial * 2 ** (attempt - 1));
  const jittered = exponential * (0.5 + random() / 2);
  if (failure.retryAfterMs === undefined) return jittered;
  const cap = options.maxRetryAfterMs ?? defaultRetryOptions.maxRetryAfterMs;
  return Math.max(jittered, Math.min(failure.retryAfterMs, cap));
}

/**
 * Run `task` until it succeeds, a failure is not retryable, or the retries are spent. Failures
 * that are not retryable are rethrown as they are; an exhausted budget throws a retryable
 * `InfrastructureError` carrying the last failure as its cause.
 */
export async function withRetries<T>(
  task: (attempt: number) => Promise<T>,
  options: RetryOptions = {},
  label = "model call",
): Promise<T> {
  const maxRetries = options.maxRetries ?? defaultRetryOptions.maxRetries;
  const sleep = options.sleep ?? defaultSleep;
  for (let attempt = 0; ; attempt += 1) {
    try {
      return await task(attempt);
    } catch (error) {
      const failure = await classifyFailure(error);
      if (!failure.retryable) throw error;
      if (attempt >= maxRetries)
        throw new InfrastructureError(
          "model.retries-exhausted",
          `${label} failed after ${attempt + 1} attempt(s): ${failure.reason}`,
          {
            cause: error,
            retryable: true,
            data: {
              attempts: attempt + 1,
              ...(failure.statusCode === undefined ? {} : { statusCode: failure.statusCode }),
            },
          },
        );
      const delayMs = backoffDelay(attempt + 1, options, failure);
      options.onRetry?.({ attempt: attempt + 1, delayMs, failure });
      await sleep(delayMs);
    }
  }
}
