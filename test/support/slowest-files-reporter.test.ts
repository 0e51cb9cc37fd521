import { describe, expect, it } from "vitest";
import {
  type FileTiming,
  nearLimitSummary,
  slowestFilesSummary,
} from "./slowest-files-reporter.js";

describe("slowestFilesSummary", () => {
  const timings: FileTiming[] = Array.from({ length: 12 }, (_, index) => ({
    file: `test/file-${index}.test.ts`,
    tier: index % 2 === 0 ? "unit" : "e2e",
    // Out of order on purpose: file-k takes (k * 7 mod 12) + 1 seconds.
    durationMs: (((index * 7) % 12) + 1) * 1000,
  }));

  it("lists the ten slowest files, longest first, with their tier, then the total", () => {
    const lines = slowestFilesSummary(timings, 95_500);
    expect(lines[0]).toBe("Slowest 10 of 12 test files:");
    const listed = lines.slice(1, 11).map((line) => line.trim().split(/\s+/));
    // Durations 12 s down to 3 s: the two fastest (1 s and 2 s) are left out.
    expect(listed.map((fields) => Number(fields[0]))).toEqual([12, 11, 10, 9, 8, 7, 6, 5, 4, 3]);
    for (const fields of listed) {
      const timing = timings.find((each) => each.file === fields[3]);
      expect(timing?.durationMs).toBe(Number(fields[0]) * 1000);
      expect(fields[2]).toBe(timing?.tier);
    }
    // 1 + 2 + ... + 12 = 78 s in files; the wall time is given separately.
    expect(lines[11]).toBe("Total: 95.5 s wall time (78.0 s in test files)");
    expect(lines).toHaveLength(12);
  });

  it("lists every file when there are fewer than the limit", () => {
    const lines = slowestFilesSummary(timings.slice(0, 3), 1_000, 10);
    expect(lines[0]).toBe("Slowest 3 of 3 test files:");
    expect(lines).toHaveLength(5);
  });
});

describe("nearLimitSummary", () => {
  it("names the tests over a third of their limit, closest to it first, and no others", () => {
    const lines = nearLimitSummary([
      { name: "a > quick", durationMs: 100, limitMs: 30_000 },
      { name: "b > half", durationMs: 15_000, limitMs: 30_000 },
      { name: "c > just under a third", durationMs: 9_900, limitMs: 30_000 },
      { name: "d > nine tenths", durationMs: 54_000, limitMs: 60_000 },
    ]);
    expect(lines[0]).toBe("2 test(s) used more than 33% of their time limit:");
    expect(lines.slice(1).map((line) => line.trim())).toEqual([
      "54.0 s of  60.0 s  d > nine tenths",
      "15.0 s of  30.0 s  b > half",
    ]);
  });

  it("prints nothing when every test is well inside its limit, and caps a long list", () => {
    expect(nearLimitSummary([{ name: "a", durationMs: 1, limitMs: 30_000 }])).toEqual([]);
    const many = Array.from({ length: 20 }, (_, index) => ({
      name: `t${index}`,
      durationMs: 20_000,
      limitMs: 30_000,
    }));
    const lines = nearLimitSummary(many, 1 / 3, 15);
    expect(lines).toHaveLength(1 + 15 + 1);
    expect(lines.at(-1)).toBe("  and 5 more");
  });
});
