import { APICallError } from "ai";
import { describe, expect, it } from "vitest";
import { InfrastructureError } from "../core/errors.js";
import { backoffDelay, classifyFailure, parseRetryAfter, withRetries } from "./retry.js";

function apiError(statusCode: number | undefined, headers: Record<string, string> = {}) {
  return new APICallError({
    message: `status ${statusCode}`,
    url: "http://127.0.0.1/v1/messages",
    requestBodyValues: {},
    ...(statusCode === undefined ? {} : { statusCode }),
    responseHeaders: headers,
    isRetryable: statusCode === undefined,
  });
}

describe("retry policy", () => {
  it("reads Retry-After as seconds, as an HTTP date, and retry-after-ms", () => {
    expect(parseRetryAfter({ "Retry-After": "3" })).toBe(3000);
    expect(parseRetryAfter({ "retry-after-ms": "250" })).toBe(250);
    const now = Date.parse("2026-01-01T00:00:00Z");
    expect(parseRetryAfter({ "retry-after": "Thu, 01 Jan 2026 00:00:10 GMT" }, now)).toBe(10_000);
    expect(parseRetryAfter({ "retry-after": "soon" })).toBeUndefined();
  });

  it("retries 429, 5xx and connection failures, not 400 or 401", async () => {
    expect(await classifyFailure(apiError(429, { "retry-after": "2" }))).toMatchObject({
      retryable: true,
      retryAfterMs: 2000,
    });
    expect((await classifyFailure(apiError(503))).retryable).toBe(true);
    expect((await classifyFailure(apiError(400))).retryable).toBe(false);
    expect((await classifyFailure(apiError(401))).retryable).toBe(false);
    expect((await classifyFailure(apiError(undefined))).retryable).toBe(true);
    const reset = Object.assign(new Error("socket hang up"), { code: "ECONNRESET" });
    expect((await classifyFailure(new TypeError("fetch failed", { cause: reset }))).retryable).toBe(
      true,
    );
    expect((await classifyFailure(new Error("bad schema"))).retryable).toBe(false);
  });

  it("backs off exponentially with jitter between 50% and 100%, capped", () => {
    const options = { initialDelayMs: 100, maxDelayMs: 1000 };
    const noHint = { retryable: true, reason: "x" };
    expect(backoffDelay(1, { ...options, random: () => 0 }, noHint)).toBe(50);
    expect(backoffDelay(3, { ...options, random: () => 0.999999 }, noHint)).toBeCloseTo(400, 3);
    expect(backoffDelay(10, { ...options, random: () => 0 }, noHint)).toBe(500);
    // A server's Retry-After wins over a shorter backoff, up to the cap.
    expect(
      backoffDelay(
        1,
        { ...options, random: () => 0, maxRetryAfterMs: 5000 },
        { ...noHint, retryAfterMs: 9000 },
      ),
    ).toBe(5000);
  });

  it("stops at once on a failure that retrying cannot fix", async () => {
    let attempts = 0;
    const failure = await withRetries(
      async () => {
        attempts += 1;
        throw apiError(400);
      },
      { sleep: async () => {} },
    ).catch((error: unknown) => error);
    expect(attempts).toBe(1);
    expect(APICallError.isInstance(failure)).toBe(true);
  });

  it("returns the first success and wraps an exhausted budget", async () => {
    let attempts = 0;
    const value = await withRetries(
      async () => {
        attempts += 1;
        if (attempts < 3) throw apiError(500);
        return "ok";
      },
      { sleep: async () => {} },
    );
    expect([value, attempts]).toEqual(["ok", 3]);
    const exhausted = await withRetries(
      async () => {
        throw apiError(502);
      },
      { maxRetries: 1, sleep: async () => {} },
    ).catch((error: unknown) => error);
    expect(exhausted).toBeInstanceOf(InfrastructureError);
    expect((exhausted as InfrastructureError).data).toMatchObject({ attempts: 2, statusCode: 502 });
  });
});
