import { describe, expect, it } from "vitest";
import { mapLimit, runLanes, Semaphore } from "./limit.js";

describe("Semaphore", () => {
  it("never lets more than the limit run at once and runs everything", async () => {
    const semaphore = new Semaphore(3);
    let running = 0;
    let peak = 0;
    const finished: number[] = [];
    await Promise.all(
      Array.from({ length: 20 }, (_, index) =>
        semaphore.run(async () => {
          running += 1;
          peak = Math.max(peak, running);
          await new Promise((resolve) => setTimeout(resolve, 1 + (index % 3)));
          running -= 1;
          finished.push(index);
        }),
      ),
    );
    expect(peak).toBe(3);
    expect(finished.sort((left, right) => left - right)).toEqual(
      Array.from({ length: 20 }, (_, index) => index),
    );
    expect(semaphore.inUse).toBe(0);
  });

  it("releases the permit when a task fails, and a double release is harmless", async () => {
    const semaphore = new Semaphore(1);
    await expect(semaphore.run(async () => Promise.reject(new Error("boom")))).rejects.toThrow(
      "boom",
    );
    const release = await semaphore.acquire();
    release();
    release();
    expect(semaphore.inUse).toBe(0);
  });

  it("rejects a limit below one", () => {
    expect(() => new Semaphore(0)).toThrow(RangeError);
  });
});

describe("mapLimit", () => {
  it("keeps at most the limit in flight and returns results in input order", async () => {
    let running = 0;
    let peak = 0;
    // Later items finish first (delay falls with the index), so completion order is reversed.
    const results = await mapLimit([1, 2, 3, 4, 5, 6, 7], 2, async (value, index) => {
      running += 1;
      peak = Math.max(peak, running);
      await new Promise((resolve) => setTimeout(resolve, 14 - 2 * index));
      running -= 1;
      return value * 10;
    });
    expect(results).toEqual([10, 20, 30, 40, 50, 60, 70]);
    expect(peak).toBe(2);
  });

  it("runs one lane for an empty list and rejects with the worker's error", async () => {
    expect(await mapLimit([], 4, async () => 1)).toEqual([]);
    await expect(
      mapLimit([1, 2], 2, async (value) => {
        if (value === 2) throw new Error("second failed");
        return value;
      }),
    ).rejects.toThrow("second failed");
  });
});

describe("runLanes", () => {
  it("stops handing out work once take() answers undefined, and after a failure", async () => {
    const queue = [1, 2, 3, 4, 5, 6];
    const seen: number[] = [];
    // take() stops after 3 items, as a budget would: items 4..6 must never start.
    await runLanes(
      2,
      () => (seen.length < 3 ? queue.shift() : undefined),
      async (item) => {
        seen.push(item);
      },
    );
    expect(seen).toEqual([1, 2, 3]);

    const started: number[] = [];
    const items = [1, 2, 3, 4, 5];
    await expect(
      runLanes(
        1,
        () => items.shift(),
        async (item) => {
          started.push(item);
          if (item === 2) throw new Error("stop");
        },
      ),
    ).rejects.toThrow("stop");
    expect(started).toEqual([1, 2]);
  });

  it("rejects only after the other lanes have finished their current item", async () => {
    // Lane A fails at once while lane B is still inside a slow item: a caller that closes its
    // store after the rejection must not find B still running.
    let slowFinished = false;
    const items = ["fail", "slow"];
    const outcome = await runLanes(
      2,
      () => items.shift(),
      async (item) => {
        if (item === "fail") throw new Error("first failure");
        await new Promise((resolve) => setTimeout(resolve, 30));
        slowFinished = true;
      },
    ).then(
      () => "resolved",
      (error: Error) => error.message,
    );
    expect(outcome).toBe("first failure");
    expect(slowFinished).toBe(true);
  });
});
