import { describe, expect, it } from "vitest";
import { PromiseMemo } from "./memo.js";

describe("PromiseMemo", () => {
  it("makes one promise per key and shares it", async () => {
    const memo = new PromiseMemo<string, number>();
    let made = 0;
    const make = async () => {
      made += 1;
      return made;
    };
    const [first, second] = await Promise.all([memo.get("a", make), memo.get("a", make)]);
    expect([first, second, made]).toEqual([1, 1, 1]);
    expect(await memo.get("b", make)).toBe(2);
    expect(memo.values()).toHaveLength(2);
  });

  it("forgets a promise that rejected, so the next caller tries again", async () => {
    const memo = new PromiseMemo<string, string>();
    await expect(memo.get("k", () => Promise.reject(new Error("down")))).rejects.toThrow("down");
    // The rejection handler runs on a later tick than the caller's own.
    await new Promise((resolve) => setImmediate(resolve));
    expect(await memo.get("k", () => Promise.resolve("up"))).toBe("up");
  });
});
