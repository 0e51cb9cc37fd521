/**
 * What the wiki's HTTP clients (search backends, document downloads) share: one deadline over a
 * whole request, headers and body alike, and the short words their errors use.
 */

/** A duration for a message: `1.5 s`. */
export function secondsText(milliseconds: number): string {
  return `${Number((milliseconds / 1000).toFixed(3))} s`;
}

/** The short reason a network call failed (`ECONNREFUSED`, `ENOTFOUND`, …). */
export function networkReason(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } }).cause;
  if (typeof cause?.code === "string") return cause.code;
  if (typeof cause?.message === "string") return cause.message;
  return error instanceof Error ? error.message : String(error);
}

/** `HTTP 404 Not Found` (or `HTTP 404` when the server sent no status text). */
export function httpStatusText(response: Response): string {
  return `HTTP ${response.status}${response.statusText === "" ? "" : ` ${response.statusText}`}`;
}

/**
 * One time limit over a request, headers and body: `signal` aborts when it passes (then
 * `timedOut` is true) or when the caller's signal aborts. `release()` in a `finally`.
 */
export class RequestDeadline {
  private readonly controller = new AbortController();
  private expired = false;
  private readonly timer: ReturnType<typeof setTimeout>;
  private readonly onAbort = () => this.controller.abort();

  constructor(
    readonly timeoutMs: number,
    private readonly outer?: AbortSignal,
  ) {
    this.timer = setTimeout(() => {
      this.expired = true;
      this.controller.abort();
    }, timeoutMs);
    outer?.addEventListener("abort", this.onAbort, { once: true });
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Whether the time limit (not the caller) ended the request. */
  get timedOut(): boolean {
    return this.expired;
  }

  /**
   * GET `url` (redirects followed) under this deadline, as skillsmith's wiki client; a failure
   * before the answer's headers is `timeout(cause)` when the deadline passed, else `unreachable`.
   */
  async get(
    url: string,
    headers: Readonly<Record<string, string>>,
    failure: {
      readonly timeout: (cause: unknown) => Error;
      readonly unreachable: (cause: unknown) => Error;
    },
  ): Promise<Response> {
    try {
      return await fetch(url, {
        signal: this.signal,
        redirect: "follow",
        headers: { "user-agent": "skillsmith-wiki", ...headers },
      });
    } catch (cause) {
      throw this.timedOut ? failure.timeout(cause) : failure.unreachable(cause);
    }
  }

  /** End the request now (a body over its cap). */
  abort(): void {
    this.controller.abort();
  }

  release(): void {
    clearTimeout(this.timer);
    this.outer?.removeEventListener("abort", this.onAbort);
  }
}
