import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ResultsStore, type RunResult } from "./results.js";

let directory: string;
beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), "results-store-"));
});
afterEach(async () => {
  await rm(directory, { recursive: true, force: true });
});

const key = { config: "c", skill: "s", requirement: "r1", arm: "with" as const, repeat: 1 };
const scored: RunResult = {
  ...key,
  status: "completed",
  passRatio: 0.75,
  passed: 3,
  total: 4,
  checks: [{ name: "a", status: "pass" }],
  flags: [],
  trajectory: { harness: "replay" },
  skillActivated: true,
  workspaceDigest: "abc",
  requiredFiles: { "x.py": true },
  usage: { inputTokens: 1, cachedInputTokens: 0, outputTokens: 2, costUsd: 0.5 },
  agentMs: 1,
  verifierMs: 2,
  totalMs: 4,
  startedAt: "2026-01-01T00:00:00.000Z",
  finishedAt: "2026-01-01T00:00:01.000Z",
  attempts: 2,
};

describe("ResultsStore", () => {
  it("stores a result once per key, counts every attempt and every cost", () => {
    const store = ResultsStore.open(directory);
    try {
      store.recordInfraAttempt({
        ...key,
        attempt: 1,
        error: "connection refused",
        costUsd: 0.25,
        startedAt: scored.startedAt,
        finishedAt: scored.finishedAt,
      });
      expect(store.has(key)).toBe(false);
      expect(store.attemptCount(key)).toBe(1);
      store.recordResult(scored);
      expect(store.has(key)).toBe(true);
      expect(store.attemptCount(key)).toBe(2);
      // A second result for the same key is refused, and its attempt row with it.
      expect(() => store.recordResult({ ...scored, passRatio: 0 })).toThrow(/UNIQUE|PRIMARY/);
      expect(store.attemptCount(key)).toBe(2);
      expect(store.totalCostUsd()).toBeCloseTo(0.75, 12);
    } finally {
      store.close();
    }
    const reader = ResultsStore.openReadOnly(directory);
    try {
      expect(reader.results()).toEqual([scored]);
    } finally {
      reader.close();
    }
  });
});
