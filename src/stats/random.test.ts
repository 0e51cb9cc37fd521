import { describe, expect, it } from "vitest";
import { InputError } from "../core/errors.js";
import { createSeededRandom } from "./random.js";

describe("createSeededRandom", () => {
  it("repeats its sequence for the same seed and differs for another", () => {
    const first = createSeededRandom(7);
    const second = createSeededRandom(7);
    const other = createSeededRandom(8);
    const a = Array.from({ length: 20 }, () => first.nextUint32());
    const b = Array.from({ length: 20 }, () => second.nextUint32());
    const c = Array.from({ length: 20 }, () => other.nextUint32());
    expect(b).toEqual(a);
    expect(c).not.toEqual(a);
    for (const value of a)
      expect(Number.isInteger(value) && value >= 0 && value < 2 ** 32).toBe(true);
  });

  it("distinguishes seeds that differ above bit 32", () => {
    const low = createSeededRandom(5).nextUint32();
    const high = createSeededRandom(5 + 2 ** 32).nextUint32();
    expect(high).not.toBe(low);
  });

  it("draws bounded integers uniformly (chi-square well below the 0.1% critical value)", () => {
    const random = createSeededRandom(123);
    const counts = new Array<number>(10).fill(0);
    const draws = 100_000;
    for (let draw = 0; draw < draws; draw++) {
      const value = random.nextBelow(10);
      counts[value] = (counts[value] as number) + 1;
    }
    const expected = draws / 10;
    const chiSquare = counts.reduce((sum, count) => sum + (count - expected) ** 2 / expected, 0);
    // 27.88 is the 99.9% quantile of χ² with 9 degrees of freedom.
    expect(chiSquare).toBeLessThan(27.88);
    const float = random.nextFloat();
    expect(float >= 0 && float < 1).toBe(true);
  });

  it("rejects a seed that is not a safe integer", () => {
    expect(() => createSeededRandom(1.5)).toThrow(InputError);
  });
});
