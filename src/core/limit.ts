/**
 * The one concurrency limiter. `Semaphore` bounds holders of a shared resource (model calls);
 * `runLanes` drains a queue with a fixed number of lanes, pulling the next item only when a lane is
 * free (so a caller can stop handing out work — a budget, an abort — between items); `mapLimit` is
 * `runLanes` over an array with the results in input order.
 */
function checkLimit(limit: number, what: string): void {
  if (!Number.isInteger(limit) || limit < 1)
    // A programming mistake, not a user's: the callers validate user-given numbers first.
    throw new RangeError(`${what} must be a positive integer, got ${limit}`);
}

/** A counting semaphore: at most `limit` holders at a time, waiters served in arrival order. */
export class Semaphore {
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(readonly limit: number) {
    checkLimit(limit, "semaphore limit");
  }

  get inUse(): number {
    return this.active;
  }

  async acquire(): Promise<() => void> {
    if (this.active < this.limit) this.active += 1;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    // The permit passes straight from a releaser to the next waiter, so `active` is unchanged then.
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      if (next === undefined) this.active -= 1;
      else next();
    };
  }

  async run<T>(task: () => Promise<T>): Promise<T> {
    const release = await this.acquire();
    try {
      return await task();
    } finally {
      release();
    }
  }
}

/**
 * Run `lanes` loops at once; each asks `take()` for its next item and ends when it answers
 * undefined. `take` is called only when a lane is free, so it is the place to stop early. After
 * the first failure of `worker` no lane takes another item; the call rejects with that failure
 * once every lane has finished its current item, so nothing is still running (and writing) when
 * the caller's cleanup starts.
 */
export async function runLanes<T>(
  lanes: number,
  take: () => T | undefined,
  worker: (item: T) => Promise<void>,
): Promise<void> {
  checkLimit(lanes, "concurrency");
  let failure: { readonly error: unknown } | undefined;
  const lane = async () => {
    while (failure === undefined) {
      const item = take();
      if (item === undefined) return;
      try {
        await worker(item);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: lanes }, lane));
  if (failure !== undefined) throw failure.error;
}

/** Run `worker` over `items` with at most `limit` in flight; results keep the input order. */
export async function mapLimit<T, R>(
  items: readonly T[],
  limit: number,
  worker: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  await runLanes(
    Math.max(1, Math.min(limit, items.length)),
    () => (next < items.length ? next++ : undefined),
    async (index) => {
      results[index] = await worker(items[index] as T, index);
    },
  );
  return results;
}

/**
 * Whether an optional signal has aborted (no signal: never). A function, not an inline check, so
 * TypeScript does not narrow `aborted` across awaits.
 */
export function isAborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
}
