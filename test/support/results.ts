/**
 * Stored runs for report tests: a `RunResult` with every field a test does not care about set to
 * a plain value, and a real results store (`ResultsStore`) in a folder holding given results and
 * attempts, so reports are built from what `bench run` would have written.
 */
import type {
  Arm,
  AttemptRecord,
  RunResult,
  VerifierRecord,
} from "../../src/bench/store/results.js";
import { ResultsStore } from "../../src/bench/store/results.js";

/** One scored run; `extra` overrides anything (flags, verifier record, repeat, checks…). */
export function runResult(
  config: string,
  skill: string,
  requirement: string,
  arm: Arm,
  passRatio: number,
  extra: Partial<RunResult> = {},
): RunResult {
  return {
    config,
    skill,
    requirement,
    arm,
    repeat: 1,
    status: "completed",
    passRatio,
    passed: 0,
    total: 0,
    checks: [],
    flags: [],
    trajectory: {},
    skillActivated: null,
    workspaceDigest: "d",
    requiredFiles: {},
    usage: { inputTokens: 10, cachedInputTokens: 0, outputTokens: 5, costUsd: 0.01 },
    agentMs: 100,
    verifierMs: 50,
    totalMs: 200,
    startedAt: "2026-01-01T00:00:00.000Z",
    finishedAt: "2026-01-01T00:00:01.000Z",
    attempts: 1,
    ...extra,
  };
}

/** A verifier record as the runner stores it. */
export function verifierRecord(
  output: string,
  extra: Partial<VerifierRecord> = {},
): VerifierRecord {
  return { output, exitCode: 1, durationMs: 40, ...extra };
}

/** An attempt lost to infrastructure, as the runner records it. */
export function infraAttempt(
  key: { config: string; skill: string; requirement: string; arm: Arm; repeat?: number },
  attempt: number,
  error: string,
): Omit<AttemptRecord, "outcome"> {
  return {
    config: key.config,
    skill: key.skill,
    requirement: key.requirement,
    arm: key.arm,
    repeat: key.repeat ?? 1,
    attempt,
    error,
    costUsd: 0,
    startedAt: "2026-01-01T00:00:00.000Z",
    finishedAt: "2026-01-01T00:00:01.000Z",
  };
}

/** Writes `results` and `attempts` into a real results store at `runDir`. */
export function writeStore(
  runDir: string,
  results: readonly RunResult[],
  attempts: ReadonlyArray<Omit<AttemptRecord, "outcome">> = [],
): void {
  const store = ResultsStore.open(runDir);
  try {
    for (const attempt of attempts) store.recordInfraAttempt(attempt);
    for (const result of results) store.recordResult(result);
  } finally {
    store.close();
  }
}
