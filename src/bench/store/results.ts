/**
 * The results store of a paired run: one SQLite database (`results.sqlite`, WAL) in the run
 * directory. A scored run is one row of `results`, keyed by (config, skill, requirement, arm,
 * repeat), so it exists at most once; every attempt, scored or lost to infrastructure, is a row
 * of `attempts`. A row is written in one transaction after everything it references (trajectory
 * files) is on disk, so a `kill -9` at any moment leaves either the whole result or nothing.
 *
 * One file although past 400 lines: the schema, its migrations and the only code reading and
 * writing those rows must change together, so a column cannot be added in one place and missed in
 * another.
 */
import { accessSync, constants, existsSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import Database from "better-sqlite3";
import type { z } from "zod";
import {
  InfrastructureError,
  InputError,
  InternalError,
  isSkillsmithError,
} from "../../core/errors.js";
import type { CheckResult, PatchFinding } from "../../env/index.js";
import { redactKnownSecrets } from "../../model/redact.js";
import {
  checkResultsSchema,
  fingerprintInputsSchema,
  flagsSchema,
  provenanceSchema,
  readColumn,
  requiredFilesSchema,
  runPatchSchema,
  trajectorySchema,
  verifierRecordSchema,
} from "./columns.js";

export const RESULTS_FILE = "results.sqlite";
export const TRAJECTORIES_FOLDER = "trajectories";

/** A variant of a skill, run as its own arm beside `with` (`--variant <name>=<folder>`). */
export type VariantArm = `variant:${string}`;
export type Arm = "without" | "with" | VariantArm;
/** The two arms every paired run has; variant arms come on top (`variantArm`). */
export const ARMS: readonly ("without" | "with")[] = ["without", "with"];

/** The arm of a named skill variant. */
export function variantArm(name: string): VariantArm {
  return `variant:${name}`;
}

/** The variant's name of a variant arm, undefined for `with` and `without`. */
export function variantName(arm: Arm): string | undefined {
  return arm.startsWith("variant:") ? arm.slice("variant:".length) : undefined;
}

export type RunStatus = "completed" | "timeout" | "agent_error" | "infra_error";

export interface RunKey {
  readonly config: string;
  readonly skill: string;
  readonly requirement: string;
  readonly arm: Arm;
  readonly repeat: number;
}

/** A stable text form of a run key, used in reports so every number traces to its runs. */
export function formatRunKey(key: RunKey): string {
  return `${key.config}/${key.skill}/${key.requirement}/${key.arm}#${key.repeat}`;
}

export interface RunUsage {
  readonly inputTokens: number;
  readonly cachedInputTokens: number;
  readonly outputTokens: number;
  readonly costUsd: number;
}

/** One scored run. `status` is never `infra_error`: those are attempts, never results. */
export interface RunResult extends RunKey {
  readonly status: Exclude<RunStatus, "infra_error">;
  /** The verifier's pass ratio; 0 for a timeout. */
  readonly passRatio: number;
  readonly passed: number;
  readonly total: number;
  readonly checks: readonly CheckResult[];
  /** Verifier flags plus `agent-timeout` when the agent hit its time limit. */
  readonly flags: readonly string[];
  /** The normalised trajectory (redacted), without its raw log when that went to a file. */
  readonly trajectory: unknown;
  /** Relative to the run directory; the agent's raw log when it was too large for the row. */
  readonly trajectoryFile?: string;
  /** null when the harness cannot tell (replay, none, oracle show no skills at all). */
  readonly skillActivated: boolean | null;
  /** `treeDigest` of the workspace handed to the agent (identical in both arms). */
  readonly workspaceDigest: string;
  /** The requirement's File Operations paths and whether each existed after the agent ran. */
  readonly requiredFiles: Readonly<Record<string, boolean>>;
  readonly usage: RunUsage;
  readonly agentMs: number;
  readonly verifierMs: number;
  readonly totalMs: number;
  readonly startedAt: string;
  readonly finishedAt: string;
  /** Attempts made for this key, including the infrastructure failures before this result. */
  readonly attempts: number;
  /** What the verifier printed and did, kept so a flagged run can be explained (redacted). */
  readonly verifier?: VerifierRecord;
  /** The agent's final change to the workspace (for `bench regrade`); absent in old stores. */
  readonly patch?: RunPatch;
  /** Everything that determined this run, hashed (`src/bench/run/fingerprint.ts`). */
  readonly fingerprint?: RunFingerprint;
  /** Set when the result was not executed here: reused from another run, or re-graded. */
  readonly provenance?: RunProvenance;
}

/** The workspace change an agent left, as a binary-safe git diff against the prepared base. */
export interface RunPatch {
  /** `git diff --binary` text, redacted; empty when the agent changed nothing. */
  readonly diff: string;
  /** Length of the diff before capping (characters). */
  readonly length: number;
  /** Files changed. */
  readonly files: number;
  /** True when the diff was longer than `PATCH_LIMIT` and cut, so it cannot be re-applied. */
  readonly truncated: boolean;
  /** True when redaction changed the text, so it may no longer apply as captured. */
  readonly redacted: boolean;
  /**
   * Why the diff does not hold the whole change, when it does not (a folder the agent made
   * into its own git repository is recorded by git as a commit id, not its files).
   */
  readonly incomplete?: string;
  /**
   * What the static scan of the change found (`scanPatch`, layer 5): evidence for review. A
   * rule a later version adds is kept as its id.
   */
  readonly scan?: readonly (Omit<PatchFinding, "rule"> & { readonly rule: string })[];
}

/** Patch text kept per run; a longer one is cut (and marked) like the verifier output. */
export const PATCH_LIMIT = 1024 * 1024;

export interface RunFingerprint {
  /** SHA-256 over `inputs` in canonical JSON. */
  readonly digest: string;
  /** What went into the digest, for showing why two runs do or do not match. */
  readonly inputs: Readonly<Record<string, unknown>>;
}

export type RunProvenance =
  | {
      readonly kind: "reused";
      /** The run directory the result was copied from (absolute). */
      readonly runDir: string;
      /** The key it had there (`formatRunKey`). */
      readonly key: string;
    }
  | {
      readonly kind: "regraded";
      readonly runDir: string;
      readonly key: string;
      /** The pass ratio the old verifier gave. */
      readonly passRatio: number;
      /** Whether the stored patch was applied and the verifier run again (else copied as it was). */
      readonly rescored: boolean;
      readonly reason?: string;
    };

/** The verifier's side of a run, beyond its checks. */
export interface VerifierRecord {
  /** stdout and stderr, capped (`VERIFIER_OUTPUT_LIMIT`), head and tail kept. */
  readonly output: string;
  readonly exitCode: number | null;
  readonly durationMs: number;
  /** Where the outcomes were read from (`channel`, `junit`, `summary`, `reward`, `none`). */
  readonly source?: string;
  /** Why a flag was set, one line each (integrity evidence, the limit that was hit, …). */
  readonly evidence?: readonly string[];
  /**
   * The integrity canaries skillsmith appended to the verifier's tests for this run (names, and
   * whether each had to pass or fail). They run among the real tests, so the output above names
   * them; a report uses this list to say which lines are not the suite's tests. Stored only once
   * the run is over: the agent that ran never saw them.
   */
  readonly canaries?: readonly StoredCanary[];
}

/** One integrity canary of a run, as stored with its verifier record. */
export interface StoredCanary {
  /** The test function's name (`test_fifteen_case`), as pytest prints it. */
  readonly name: string;
  /** The verifier's file it was appended to, relative to the verifier's root. */
  readonly file: string;
  readonly expect: "pass" | "fail";
}

/** Verifier output kept per run: the head and the tail, where tracebacks and summaries are. */
export const VERIFIER_OUTPUT_LIMIT = 32 * 1024;

export function capVerifierOutput(output: string, limit = VERIFIER_OUTPUT_LIMIT): string {
  if (output.length <= limit) return output;
  const half = Math.floor(limit / 2);
  const dropped = output.length - 2 * half;
  return `${output.slice(0, half)}\n[… ${dropped} characters left out …]\n${output.slice(-half)}`;
}

export interface AttemptRecord extends RunKey {
  readonly attempt: number;
  readonly outcome: "scored" | "infra_error";
  readonly error?: string;
  readonly costUsd: number;
  readonly startedAt: string;
  readonly finishedAt: string;
}

/**
 * The store's format, in `PRAGMA user_version`. Migrations run in order from the version a file
 * has to this one, each in one transaction; a file from a newer skillsmith is refused, not read.
 * Version 0 with tables is what skillsmith 0.1 wrote (no version): migration 1 leaves it as is.
 */
export const RESULTS_STORE_VERSION = 3;

const MIGRATIONS: readonly { readonly version: number; readonly sql: string }[] = [
  {
    version: 1,
    sql: `
CREATE TABLE IF NOT EXISTS results (
  config TEXT NOT NULL,
  skill TEXT NOT NULL,
  requirement TEXT NOT NULL,
  arm TEXT NOT NULL CHECK (arm IN ('without', 'with')),
  repeat INTEGER NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('completed', 'timeout', 'agent_error')),
  pass_ratio REAL NOT NULL,
  passed INTEGER NOT NULL,
  total INTEGER NOT NULL,
  checks_json TEXT NOT NULL,
  flags_json TEXT NOT NULL,
  trajectory_json TEXT NOT NULL,
  trajectory_file TEXT,
  skill_activated INTEGER,
  workspace_digest TEXT NOT NULL,
  required_files_json TEXT NOT NULL,
  input_tokens INTEGER NOT NULL,
  cached_input_tokens INTEGER NOT NULL,
  output_tokens INTEGER NOT NULL,
  cost_usd REAL NOT NULL,
  agent_ms REAL NOT NULL,
  verifier_ms REAL NOT NULL,
  total_ms REAL NOT NULL,
  started_at TEXT NOT NULL,
  finished_at TEXT NOT NULL,
  attempts INTEGER NOT NULL,
  PRIMARY KEY (config, skill, requirement, arm, repeat)
);
CREATE TABLE IF NOT EXISTS attempts (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  config TEXT NOT NULL,
  skill TEXT NOT NULL,
  requirement TEXT NOT NULL,
  arm TEXT NOT NULL,
  repeat INTEGER NOT NULL,
  attempt INTEGER NOT NULL,
  outcome TEXT NOT NULL CHECK (outcome IN ('scored', 'infra_error')),
  error TEXT,
  cost_usd REAL NOT NULL,
  started_at TEXT NOT NULL,
  finished_at TEXT NOT NULL
);
`,
  },
  { version: 2, sql: "ALTER TABLE results ADD COLUMN verifier_json TEXT" },
  {
    // Variant arms (\`variant:<name>\`) need the arm CHECK widened, which SQLite can only do by
    // rebuilding the table; the new columns keep each run's patch, fingerprint and provenance.
    // The columns of version 1 are written out again on purpose: a released migration is frozen,
    // so it never derives its text from another one that could change.
    version: 3,
    sql: `
CREATE TABLE results_v3 (
  config TEXT NOT NULL,
  skill TEXT NOT NULL,
  requirement TEXT NOT NULL,
  arm TEXT NOT NULL CHECK (arm IN ('without', 'with') OR arm GLOB 'variant:?*'),
  repeat INTEGER NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('completed', 'timeout', 'agent_error')),
  pass_ratio REAL NOT NULL,
  passed INTEGER NOT NULL,
  total INTEGER NOT NULL,
  checks_json TEXT NOT NULL,
  flags_json TEXT NOT NULL,
  trajectory_json TEXT NOT NULL,
  trajectory_file TEXT,
  skill_activated INTEGER,
  workspace_digest TEXT NOT NULL,
  required_files_json TEXT NOT NULL,
  input_tokens INTEGER NOT NULL,
  cached_input_tokens INTEGER NOT NULL,
  output_tokens INTEGER NOT NULL,
  cost_usd REAL NOT NULL,
  agent_ms REAL NOT NULL,
  verifier_ms REAL NOT NULL,
  total_ms REAL NOT NULL,
  started_at TEXT NOT NULL,
  finished_at TEXT NOT NULL,
  attempts INTEGER NOT NULL,
  verifier_json TEXT,
  patch_json TEXT,
  fingerprint TEXT,
  fingerprint_json TEXT,
  provenance_json TEXT,
  PRIMARY KEY (config, skill, requirement, arm, repeat)
);
INSERT INTO results_v3 (config, skill, requirement, arm, repeat, status, pass_ratio, passed,
  total, checks_json, flags_json, trajectory_json, trajectory_file, skill_activated,
  workspace_digest, required_files_json, input_tokens, cached_input_tokens, output_tokens,
  cost_usd, agent_ms, verifier_ms, total_ms, started_at, finished_at, attempts, verifier_json)
SELECT config, skill, requirement, arm, repeat, status, pass_ratio, passed, total, checks_json,
  flags_json, trajectory_json, trajectory_file, skill_activated, workspace_digest,
  required_files_json, input_tokens, cached_input_tokens, output_tokens, cost_usd, agent_ms,
  verifier_ms, total_ms, started_at, finished_at, attempts, verifier_json FROM results;
DROP TABLE results;
ALTER TABLE results_v3 RENAME TO results;
CREATE INDEX results_fingerprint ON results (fingerprint);
`,
  },
];

interface ResultRow {
  config: string;
  skill: string;
  requirement: string;
  arm: Arm;
  repeat: number;
  status: RunResult["status"];
  pass_ratio: number;
  passed: number;
  total: number;
  checks_json: string;
  flags_json: string;
  trajectory_json: string;
  trajectory_file: string | null;
  skill_activated: number | null;
  workspace_digest: string;
  required_files_json: string;
  input_tokens: number;
  cached_input_tokens: number;
  output_tokens: number;
  cost_usd: number;
  agent_ms: number;
  verifier_ms: number;
  total_ms: number;
  started_at: string;
  finished_at: string;
  attempts: number;
  verifier_json: string | null;
  patch_json: string | null;
  fingerprint: string | null;
  fingerprint_json: string | null;
  provenance_json: string | null;
}

function fromRow(row: ResultRow, file: string): RunResult {
  const run = `${row.config}/${row.skill}/${row.requirement}/${row.arm}#${row.repeat}`;
  const column = <Output>(schema: z.ZodType<Output>, text: string, name: string): Output =>
    readColumn(schema, text, { file, run, column: name });
  return {
    config: row.config,
    skill: row.skill,
    requirement: row.requirement,
    arm: row.arm,
    repeat: row.repeat,
    status: row.status,
    passRatio: row.pass_ratio,
    passed: row.passed,
    total: row.total,
    checks: column(checkResultsSchema, row.checks_json, "checks_json"),
    flags: column(flagsSchema, row.flags_json, "flags_json"),
    trajectory: column(trajectorySchema, row.trajectory_json, "trajectory_json"),
    ...(row.trajectory_file === null ? {} : { trajectoryFile: row.trajectory_file }),
    skillActivated: row.skill_activated === null ? null : row.skill_activated === 1,
    workspaceDigest: row.workspace_digest,
    requiredFiles: column(requiredFilesSchema, row.required_files_json, "required_files_json"),
    usage: {
      inputTokens: row.input_tokens,
      cachedInputTokens: row.cached_input_tokens,
      outputTokens: row.output_tokens,
      costUsd: row.cost_usd,
    },
    agentMs: row.agent_ms,
    verifierMs: row.verifier_ms,
    totalMs: row.total_ms,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
    attempts: row.attempts,
    ...(row.verifier_json === null
      ? {}
      : { verifier: column(verifierRecordSchema, row.verifier_json, "verifier_json") }),
    ...(row.patch_json === null
      ? {}
      : { patch: column(runPatchSchema, row.patch_json, "patch_json") }),
    ...(row.fingerprint === null
      ? {}
      : {
          fingerprint: {
            digest: row.fingerprint,
            inputs: column(
              fingerprintInputsSchema,
              row.fingerprint_json ?? "{}",
              "fingerprint_json",
            ),
          },
        }),
    ...(row.provenance_json === null
      ? {}
      : { provenance: column(provenanceSchema, row.provenance_json, "provenance_json") }),
  };
}

/** Bring a results database to `RESULTS_STORE_VERSION`, or explain why it cannot be read. */
function migrate(database: Database.Database, file: string, readOnly: boolean): void {
  const version = database.pragma("user_version", { simple: true }) as number;
  if (version > RESULTS_STORE_VERSION) {
    throw new InputError(
      "bench.results-store-newer",
      `written by a newer skillsmith (store format ${version}; this version reads up to ${RESULTS_STORE_VERSION}): upgrade skillsmith to read it`,
      { file },
    );
  }
  if (version === RESULTS_STORE_VERSION) return;
  // Version 0 is either a new, empty file or a 0.1 store (which has a results table); a file
  // with other tables is someone else's database, never to be written into.
  if (version === 0) {
    const tables = (
      database.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as {
        name: string;
      }[]
    ).map((table) => table.name);
    if (tables.length > 0 && !tables.includes("results")) {
      throw new InputError(
        "bench.results-store-foreign",
        `not a skillsmith results store (it holds tables ${tables.slice(0, 5).join(", ")}); use a new --out folder`,
        { file },
      );
    }
  }
  if (readOnly) {
    // Reading an older file without writing it: every migration keeps the old columns (3
    // rebuilds the table only to widen a CHECK), and `fromRow` reads a missing column as
    // absent, so an old file reads as it is.
    const tables = database
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'results'")
      .all();
    if (tables.length === 0) {
      throw new InputError(
        "bench.results-store-foreign",
        "not a skillsmith results store (no results table)",
        {
          file,
        },
      );
    }
    return;
  }
  database.transaction(() => {
    for (const migration of MIGRATIONS) {
      if (migration.version <= version) continue;
      database.exec(migration.sql);
    }
    database.pragma(`user_version = ${RESULTS_STORE_VERSION}`);
  })();
}

/** SQLite's and the file system's codes for a file that is not a (whole) database. */
const DAMAGED = new Set(["SQLITE_NOTADB", "SQLITE_CORRUPT", "SQLITE_CORRUPT_VTAB"]);
const NO_SPACE = new Set(["SQLITE_FULL", "ENOSPC", "EDQUOT"]);
const NOT_WRITABLE = new Set([
  "SQLITE_READONLY",
  "SQLITE_READONLY_DIRECTORY",
  "SQLITE_READONLY_DBMOVED",
  "SQLITE_CANTOPEN",
  "SQLITE_PERM",
  "SQLITE_IOERR_WRITE",
  "EACCES",
  "EPERM",
  "EROFS",
]);

function codeOf(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : "";
}

/**
 * A failure of the store's file as one sentence naming the file and what to do, typed so the
 * CLI exits 2 (a damaged file the user must move aside) or 3 (the disk or folder), without a
 * stack trace. SQLite writes each result in one transaction, so a failed write stores nothing
 * half and everything committed before it stays.
 */
export function storeFailure(error: unknown, file: string): Error {
  if (isSkillsmithError(error)) return error;
  const code = codeOf(error);
  const detail = error instanceof Error ? error.message : String(error);
  if (DAMAGED.has(code) || code.startsWith("SQLITE_CORRUPT")) {
    return new InputError(
      "bench.results-store-damaged",
      `not a readable results store (damaged or not an SQLite file: ${detail}); move it aside and run again, or use a new --out folder`,
      { file },
      { cause: error },
    );
  }
  if (NO_SPACE.has(code) || code.startsWith("SQLITE_FULL")) {
    return new InfrastructureError(
      "bench.results-store-disk-full",
      // The detail (SQLite's or the file system's words) keeps the failure to this one line:
      // the CLI adds a "caused by" line only for a cause the message does not already quote.
      `${file}: no space left on the device (${detail}); free space and run again (results stored so far are kept)`,
      { cause: error, data: { file } },
    );
  }
  if (
    NOT_WRITABLE.has(code) ||
    code.startsWith("SQLITE_READONLY") ||
    code.startsWith("SQLITE_CANTOPEN")
  ) {
    return new InfrastructureError(
      "bench.results-store-unwritable",
      `${file}: cannot be written (${detail}); make the run folder writable or choose another --out folder`,
      { cause: error, data: { file } },
    );
  }
  if (code.startsWith("SQLITE_")) {
    return new InfrastructureError(
      "bench.results-store-failed",
      `${file}: the results store failed (${detail}); stored results are kept, run again to retry`,
      { cause: error, data: { file } },
    );
  }
  return error instanceof Error
    ? error
    : new InternalError("bench.results-store-non-error", `${file}: ${detail}`, { cause: error });
}

/**
 * Create the run directory. Node's recursive mkdir reports ENOENT when the nearest existing
 * folder is on a read-only file system; the real reason is found by asking that folder.
 */
function makeRunDirectory(runDir: string): void {
  try {
    mkdirSync(runDir, { recursive: true });
  } catch (error) {
    let folder = dirname(runDir);
    // A probe only: `existsSync` calls an unreadable folder absent, and then `accessSync` on
    // its parent throws the real reason (or the original error is rethrown below).
    while (!existsSync(folder) && dirname(folder) !== folder) folder = dirname(folder);
    accessSync(folder, constants.W_OK);
    throw error;
  }
}

/** Columns later migrations added: a read-only store of an older format lacks them. */
type OptionalColumn =
  | "verifier_json"
  | "patch_json"
  | "fingerprint"
  | "fingerprint_json"
  | "provenance_json";

export class ResultsStore {
  private readonly database: Database.Database;
  private readonly file: string;

  private constructor(
    readonly runDir: string,
    readOnly: boolean,
  ) {
    this.file = join(runDir, RESULTS_FILE);
    const file = this.file;
    let database: Database.Database | undefined;
    try {
      if (!readOnly) makeRunDirectory(runDir);
      database = new Database(file, { readonly: readOnly, fileMustExist: readOnly });
      database.pragma("busy_timeout = 5000");
      if (!readOnly) {
        database.pragma("journal_mode = WAL");
        // FULL: a committed result survives a power cut, not only a killed process.
        database.pragma("synchronous = FULL");
      }
      migrate(database, file, readOnly);
    } catch (error) {
      database?.close();
      throw storeFailure(error, file);
    }
    this.database = database;
  }

  /** Run one operation on the database, turning its failure into `storeFailure`'s sentence. */
  private guarded<T>(operation: () => T): T {
    try {
      return operation();
    } catch (error) {
      throw storeFailure(error, this.file);
    }
  }

  static open(runDir: string): ResultsStore {
    return new ResultsStore(runDir, false);
  }

  static openReadOnly(runDir: string): ResultsStore {
    return new ResultsStore(runDir, true);
  }

  close(): void {
    this.database.close();
  }

  has(key: RunKey): boolean {
    return this.guarded(() => this.hasRow(key));
  }

  private hasRow(key: RunKey): boolean {
    const row = this.database
      .prepare(
        "SELECT 1 FROM results WHERE config = ? AND skill = ? AND requirement = ? AND arm = ? AND repeat = ?",
      )
      .get(key.config, key.skill, key.requirement, key.arm, key.repeat);
    return row !== undefined;
  }

  /** The flags of the stored result of `key`, or undefined when none is stored. */
  flagsOf(key: RunKey): string[] | undefined {
    const row = this.database
      .prepare(
        "SELECT flags_json FROM results WHERE config = ? AND skill = ? AND requirement = ? AND arm = ? AND repeat = ?",
      )
      .get(key.config, key.skill, key.requirement, key.arm, key.repeat) as
      | { flags_json: string }
      | undefined;
    return row === undefined
      ? undefined
      : readColumn(flagsSchema, row.flags_json, {
          file: this.file,
          run: formatRunKey(key),
          column: "flags_json",
        });
  }

  /**
   * Remove the stored result of `key` (its attempts stay, so attempt numbers continue). Used only
   * for results that measured nothing (an environment that failed, a verifier found broken),
   * which a later invocation decides again.
   */
  deleteResult(key: RunKey): void {
    this.database
      .prepare(
        "DELETE FROM results WHERE config = ? AND skill = ? AND requirement = ? AND arm = ? AND repeat = ?",
      )
      .run(key.config, key.skill, key.requirement, key.arm, key.repeat);
  }

  /** Attempts already recorded for a key (over every process that worked on this run). */
  attemptCount(key: RunKey): number {
    const row = this.database
      .prepare(
        "SELECT COUNT(*) AS count FROM attempts WHERE config = ? AND skill = ? AND requirement = ? AND arm = ? AND repeat = ?",
      )
      .get(key.config, key.skill, key.requirement, key.arm, key.repeat) as { count: number };
    return row.count;
  }

  recordInfraAttempt(record: Omit<AttemptRecord, "outcome">): void {
    const safe = redactKnownSecrets(record);
    this.guarded(() => this.insertAttempt({ ...safe, outcome: "infra_error" }));
  }

  /**
   * Store a scored result and its attempt in one transaction. The primary key makes a second
   * result for the same key fail instead of counting twice.
   */
  recordResult(unredacted: RunResult, unredactedAttemptError?: string): void {
    // The boundary where results leave the run: every field, present or future, is redacted
    // here (known keys and token shapes), whatever the harness or verifier already did.
    const result = redactKnownSecrets(unredacted);
    const attemptError =
      unredactedAttemptError === undefined ? undefined : redactKnownSecrets(unredactedAttemptError);
    this.guarded(() => this.insertResult(result, attemptError));
  }

  private insertResult(result: RunResult, attemptError: string | undefined): void {
    const insert = this.database.prepare(`INSERT INTO results (config, skill, requirement, arm,
      repeat, status, pass_ratio, passed, total, checks_json, flags_json, trajectory_json,
      trajectory_file, skill_activated, workspace_digest, required_files_json, input_tokens,
      cached_input_tokens, output_tokens, cost_usd, agent_ms, verifier_ms, total_ms, started_at,
      finished_at, attempts, verifier_json, patch_json, fingerprint, fingerprint_json,
      provenance_json) VALUES (
      @config, @skill, @requirement, @arm, @repeat, @status, @pass_ratio, @passed, @total,
      @checks_json, @flags_json, @trajectory_json, @trajectory_file, @skill_activated,
      @workspace_digest, @required_files_json, @input_tokens, @cached_input_tokens,
      @output_tokens, @cost_usd, @agent_ms, @verifier_ms, @total_ms, @started_at, @finished_at,
      @attempts, @verifier_json, @patch_json, @fingerprint, @fingerprint_json, @provenance_json)`);
    const row: ResultRow = {
      config: result.config,
      skill: result.skill,
      requirement: result.requirement,
      arm: result.arm,
      repeat: result.repeat,
      status: result.status,
      pass_ratio: result.passRatio,
      passed: result.passed,
      total: result.total,
      checks_json: JSON.stringify(result.checks),
      flags_json: JSON.stringify(result.flags),
      trajectory_json: JSON.stringify(result.trajectory),
      trajectory_file: result.trajectoryFile ?? null,
      skill_activated: result.skillActivated === null ? null : result.skillActivated ? 1 : 0,
      workspace_digest: result.workspaceDigest,
      required_files_json: JSON.stringify(result.requiredFiles),
      input_tokens: result.usage.inputTokens,
      cached_input_tokens: result.usage.cachedInputTokens,
      output_tokens: result.usage.outputTokens,
      cost_usd: result.usage.costUsd,
      agent_ms: result.agentMs,
      verifier_ms: result.verifierMs,
      total_ms: result.totalMs,
      started_at: result.startedAt,
      finished_at: result.finishedAt,
      attempts: result.attempts,
      verifier_json: result.verifier === undefined ? null : JSON.stringify(result.verifier),
      patch_json: result.patch === undefined ? null : JSON.stringify(result.patch),
      fingerprint: result.fingerprint?.digest ?? null,
      fingerprint_json:
        result.fingerprint === undefined ? null : JSON.stringify(result.fingerprint.inputs),
      provenance_json: result.provenance === undefined ? null : JSON.stringify(result.provenance),
    };
    this.database.transaction(() => {
      insert.run(row);
      this.insertAttempt({
        config: result.config,
        skill: result.skill,
        requirement: result.requirement,
        arm: result.arm,
        repeat: result.repeat,
        attempt: result.attempts,
        outcome: "scored",
        ...(attemptError === undefined ? {} : { error: attemptError }),
        costUsd: result.usage.costUsd,
        startedAt: result.startedAt,
        finishedAt: result.finishedAt,
      });
    })();
  }

  results(): RunResult[] {
    return this.guarded(() => this.readResults());
  }

  private readResults(): RunResult[] {
    const rows = this.database
      .prepare("SELECT * FROM results ORDER BY config, skill, requirement, arm, repeat")
      .all() as Array<Partial<ResultRow> & Omit<ResultRow, OptionalColumn>>;
    return rows.map((row) =>
      fromRow(
        {
          ...row,
          verifier_json: row.verifier_json ?? null,
          patch_json: row.patch_json ?? null,
          fingerprint: row.fingerprint ?? null,
          fingerprint_json: row.fingerprint_json ?? null,
          provenance_json: row.provenance_json ?? null,
        },
        this.file,
      ),
    );
  }

  /**
   * Results whose fingerprint is `digest`, by repeat: the candidates for reusing a run whose
   * every determining input is the same (`src/bench/run/reuse.ts`).
   */
  resultsWithFingerprint(digest: string): RunResult[] {
    return this.guarded(() => {
      const hasColumn = (
        this.database.prepare("PRAGMA table_info(results)").all() as { name: string }[]
      ).some((column) => column.name === "fingerprint");
      if (!hasColumn) return [];
      const rows = this.database
        .prepare("SELECT * FROM results WHERE fingerprint = ? ORDER BY config, repeat")
        .all(digest) as ResultRow[];
      return rows.map((row) => fromRow(row, this.file));
    });
  }

  attempts(): AttemptRecord[] {
    return this.guarded(() => this.readAttempts());
  }

  private readAttempts(): AttemptRecord[] {
    const rows = this.database.prepare("SELECT * FROM attempts ORDER BY id").all() as Array<{
      config: string;
      skill: string;
      requirement: string;
      arm: Arm;
      repeat: number;
      attempt: number;
      outcome: AttemptRecord["outcome"];
      error: string | null;
      cost_usd: number;
      started_at: string;
      finished_at: string;
    }>;
    return rows.map((row) => ({
      config: row.config,
      skill: row.skill,
      requirement: row.requirement,
      arm: row.arm,
      repeat: row.repeat,
      attempt: row.attempt,
      outcome: row.outcome,
      ...(row.error === null ? {} : { error: row.error }),
      costUsd: row.cost_usd,
      startedAt: row.started_at,
      finishedAt: row.finished_at,
    }));
  }

  /** Money spent so far: scored results plus attempts lost to infrastructure. */
  totalCostUsd(): number {
    const row = this.database
      .prepare("SELECT COALESCE(SUM(cost_usd), 0) AS cost FROM attempts")
      .get() as { cost: number };
    return row.cost;
  }

  private insertAttempt(record: AttemptRecord): void {
    this.database
      .prepare(
        `INSERT INTO attempts (config, skill, requirement, arm, repeat, attempt, outcome, error,
          cost_usd, started_at, finished_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        record.config,
        record.skill,
        record.requirement,
        record.arm,
        record.repeat,
        record.attempt,
        record.outcome,
        record.error ?? null,
        record.costUsd,
        record.startedAt,
        record.finishedAt,
      );
  }
}
