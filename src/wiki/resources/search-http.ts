/**
 * HTTP for the search backends: a JSON GET under one deadline and a size cap, and the errors of
 * its answers (rate limits name when to retry; 4xx are the user's, 5xx the service's).
 */
import { InfrastructureError, InputError, isSkillsmithError } from "../../core/errors.js";
import { httpStatusText, networkReason, RequestDeadline, secondsText } from "./http.js";

export const DEFAULT_SEARCH_TIMEOUT_MS = 15_000;
/** A search answer is a page of results; anything larger is not one. */
export const MAX_SEARCH_ANSWER_BYTES = 5 * 1024 * 1024;

export interface JsonAnswer {
  readonly value: unknown;
  readonly headers: Headers;
}

/**
 * GET a JSON document with a time limit over headers and body and a size cap. `shown` is the
 * URL as it may be printed (without secrets). Rate limits (429, or 403 with
 * `x-ratelimit-remaining: 0`) name when to retry.
 */
export async function getJson(
  url: string,
  options: {
    readonly backend: string;
    readonly shown: string;
    readonly headers?: Record<string, string>;
    readonly timeoutMs: number;
    readonly signal?: AbortSignal;
    readonly now?: () => Date;
  },
): Promise<JsonAnswer> {
  const what = `search ${options.backend}: GET ${options.shown}`;
  const deadline = new RequestDeadline(options.timeoutMs, options.signal);
  const timeout = (cause?: unknown) =>
    new InfrastructureError(
      "wiki.search-timeout",
      `${what}: no complete answer within ${secondsText(options.timeoutMs)}`,
      { retryable: true, data: { backend: options.backend, timeoutMs: options.timeoutMs }, cause },
    );
  try {
    const response = await deadline.get(
      url,
      { accept: "application/json", ...options.headers },
      {
        timeout,
        unreachable: (cause) =>
          new InfrastructureError(
            "wiki.search-unreachable",
            `${what} failed: ${networkReason(cause)}`,
            { retryable: true, data: { backend: options.backend }, cause },
          ),
      },
    );
    let text: string;
    try {
      text = await readCapped(response, MAX_SEARCH_ANSWER_BYTES, what);
    } catch (cause) {
      if (isSkillsmithError(cause)) throw cause;
      if (deadline.timedOut) throw timeout(cause);
      throw new InfrastructureError(
        "wiki.search-interrupted",
        `${what}: the answer broke off: ${networkReason(cause)}`,
        { retryable: true, data: { backend: options.backend }, cause },
      );
    }
    if (!response.ok) throw statusError(response, text, what, options);
    try {
      return { value: JSON.parse(text), headers: response.headers };
    } catch {
      throw new InfrastructureError(
        "wiki.search-invalid-answer",
        `${what}: the answer is not JSON (Content-Type "${response.headers.get("content-type") ?? "none"}", starts ${JSON.stringify(text.slice(0, 60))})`,
        { data: { backend: options.backend } },
      );
    }
  } finally {
    deadline.release();
  }
}

async function readCapped(response: Response, cap: number, what: string): Promise<string> {
  const declared = Number(response.headers.get("content-length") ?? Number.NaN);
  const tooLarge = () =>
    new InfrastructureError(
      "wiki.search-too-large",
      `${what}: the answer is larger than ${cap} bytes, which no page of search results is`,
    );
  if (Number.isFinite(declared) && declared > cap) {
    await response.body?.cancel().catch(() => {});
    throw tooLarge();
  }
  if (response.body === null) return "";
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    bytes += value.byteLength;
    if (bytes > cap) {
      await reader.cancel().catch(() => {});
      throw tooLarge();
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** The error of a non-2xx answer: rate limits and server errors are retryable, 4xx are the user's. */
function statusError(
  response: Response,
  body: string,
  what: string,
  options: { backend: string; now?: () => Date },
): Error {
  const status = httpStatusText(response);
  let message = "";
  try {
    const parsed = JSON.parse(body) as { message?: unknown };
    if (typeof parsed.message === "string") message = parsed.message;
  } catch {
    // Not a JSON error body (an HTML error page, plain text): its first line is the message.
    message = body.trim().split("\n")[0]?.slice(0, 160) ?? "";
  }
  // The message is the server's: no control characters reach a terminal or a log line.
  const clean = message
    .replace(/\p{Cc}+/gu, " ")
    .replace(/ {2,}/g, " ")
    .trim()
    .slice(0, 200);
  const detail = clean === "" ? "" : `: ${clean}`;
  const remaining = response.headers.get("x-ratelimit-remaining");
  const retryAfter = Number(response.headers.get("retry-after") ?? Number.NaN);
  const reset = Number(response.headers.get("x-ratelimit-reset") ?? Number.NaN);
  const rateLimited =
    response.status === 429 ||
    (response.status === 403 &&
      (remaining === "0" || Number.isFinite(retryAfter) || /rate limit/i.test(message)));
  if (rateLimited) {
    const when = Number.isFinite(retryAfter)
      ? `retry after ${retryAfter} s (retry-after)`
      : Number.isFinite(reset)
        ? `retry after ${new Date(reset * 1000).toISOString()} (x-ratelimit-reset)`
        : "retry in a minute or more";
    return new InfrastructureError(
      "wiki.search-rate-limited",
      `${what}: rate-limited (${status}${detail}); ${when}`,
      {
        retryable: true,
        data: {
          backend: options.backend,
          status: response.status,
          ...(Number.isFinite(retryAfter) ? { retryAfterSeconds: retryAfter } : {}),
          ...(Number.isFinite(reset) ? { resetAt: new Date(reset * 1000).toISOString() } : {}),
        },
      },
    );
  }
  if (response.status === 401)
    return new InputError(
      "wiki.search-unauthorised",
      `${what}: answered ${status}${detail}; check the token`,
      {},
      {
        data: { backend: options.backend, status: response.status },
      },
    );
  if (response.status >= 400 && response.status < 500)
    return new InputError(
      "wiki.search-status",
      `${what}: answered ${status}${detail}`,
      {},
      {
        data: { backend: options.backend, status: response.status },
      },
    );
  return new InfrastructureError("wiki.search-status", `${what}: answered ${status}${detail}`, {
    retryable: response.status >= 500,
    data: { backend: options.backend, status: response.status },
  });
}

export function invalidAnswer(
  backend: string,
  request: string,
  problem: string,
): InfrastructureError {
  return new InfrastructureError(
    "wiki.search-invalid-answer",
    `search ${backend}: GET ${request}: ${problem}`,
    { data: { backend } },
  );
}
