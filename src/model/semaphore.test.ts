import { describe, expect, it } from "vitest";
import { Semaphore } from "./semaphore.js";

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
