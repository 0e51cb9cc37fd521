import type { ResourceLimits } from "../sandbox/types.js";

export type CheckStatus = "pass" | "fail" | "error" | "skip";

/** One collected check (test case) and what became of it. */
export interface CheckResult {
  readonly name: string;
  readonly status: CheckStatus;
  /** Failure, error or skip message when the runner gave one. */
  readonly message?: string;
}

/**
 * Why a verifier scored 0 regardless of its checks. Distinct flags so a report can tell a broken
 * verifier (no checks, collection error) from an agent that ran out of time.
 */
export type VerifierFlag =
  | "no-checks"
  | "collection-error"
  | "timeout"
  | "oom"
  | "process-limit"
  | "tampered";

/** A file a verifier brings into the workspace. */
export interface VerifierFile {
  /** Relative to the workspace root, `/`-separated; may not leave the workspace. */
  readonly path: string;
  readonly content: string | Uint8Array;
  /** Octal permission bits; default 0o644. */
  readonly mode?: number;
}

/** A verifier: files copied into the workspace after the agent has finished, plus a command. */
export interface VerifierSpec {
  readonly name?: string;
  /** Files written into the workspace (overwriting anything the agent left at those paths). */
  readonly files?: readonly VerifierFile[];
  /** A host folder whose contents are copied into the workspace root, structure preserved. */
  readonly directory?: string;
  /** argv, or one string run with `sh -c`. Runs with the workspace mount path as its cwd. */
  readonly command: readonly string[] | string;
  /**
   * JUnit XML written by the command, relative to the workspace root: one file, or a folder whose
   * `*.xml` files are all read (Maven Surefire's `target/surefire-reports`). Deleted before the
   * run, so a stale or planted file cannot be mistaken for this run's result.
   */
  readonly resultsFile?: string;
  readonly env?: Readonly<Record<string, string>>;
  /** Default 10 minutes. */
  readonly timeoutMs?: number;
  readonly limits?: Omit<ResourceLimits, "timeoutMs">;
}

export interface VerifierResult {
  readonly checks: readonly CheckResult[];
  readonly passed: number;
  /** All collected checks; skipped and errored ones count here and not as passed. */
  readonly total: number;
  /** passed / total, or 0 when flagged or nothing was collected. */
  readonly passRatio: number;
  readonly flags: readonly VerifierFlag[];
  /** Where the checks were read from: skillsmith's pytest channel, a JUnit report, the console. */
  readonly source: "channel" | "junit" | "summary" | "none";
  /** Why a flag was set, one line each (`tampered`: which cross-check failed, on which ids). */
  readonly evidence: readonly string[];
  /** Which runner's summary format matched (when `source` is `summary`). */
  readonly runner?: "pytest" | "node-test" | "vitest" | "go-test";
  readonly exitCode: number | null;
  readonly timedOut: boolean;
  readonly durationMs: number;
  readonly stdout: string;
  readonly stderr: string;
}
