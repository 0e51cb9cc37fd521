import { mkdtemp, rm, stat, truncate, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { InputError } from "../../core/errors.js";
import { registerSecret } from "../../model/redact.js";
import {
  capVerifierOutput,
  RESULTS_FILE,
  RESULTS_STORE_VERSION,
  ResultsStore,
  type RunResult,
} from "./results.js";

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

describe("ResultsStore JSON columns", () => {
  // A row edited by hand or written by something else: a column of the wrong shape is refused
  // with the file, the run and the column named, instead of being read as a result.
  it.each([
    ["checks_json", '[{"name":"a","status":"passed-ish"}]', /checks_json: 0\.status/],
    ["flags_json", '"weak-verifier"', /flags_json/],
    ["required_files_json", '{"x.py":"yes"}', /required_files_json: x\.py/],
    ["checks_json", "[not json", /checks_json is not JSON/],
  ])("refuses a %s holding %s", (column, text, message) => {
    const store = ResultsStore.open(directory);
    store.recordResult(scored);
    store.close();
    const database = new Database(join(directory, RESULTS_FILE));
    database.prepare(`UPDATE results SET ${column} = ?`).run(text);
    database.close();
    const reader = ResultsStore.openReadOnly(directory);
    try {
      let thrown: unknown;
      try {
        reader.results();
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(InputError);
      expect((thrown as InputError).code).toBe("bench.results-column-invalid");
      expect((thrown as InputError).message).toMatch(message);
      expect((thrown as InputError).message).toContain("c/s/r1/with#1");
      expect((thrown as InputError).message).toContain(RESULTS_FILE);
    } finally {
      reader.close();
    }
  });
});

describe("ResultsStore format versions", () => {
  /** The tables exactly as skillsmith 0.1 created them: no user_version, no verifier column. */
  function writeVersionZeroStore(): void {
    const database = new Database(join(directory, RESULTS_FILE));
    database.exec(`CREATE TABLE results (
      config TEXT NOT NULL, skill TEXT NOT NULL, requirement TEXT NOT NULL, arm TEXT NOT NULL,
      repeat INTEGER NOT NULL, status TEXT NOT NULL, pass_ratio REAL NOT NULL,
      passed INTEGER NOT NULL, total INTEGER NOT NULL, checks_json TEXT NOT NULL,
      flags_json TEXT NOT NULL, trajectory_json TEXT NOT NULL, trajectory_file TEXT,
      skill_activated INTEGER, workspace_digest TEXT NOT NULL, required_files_json TEXT NOT NULL,
      input_tokens INTEGER NOT NULL, cached_input_tokens INTEGER NOT NULL,
      output_tokens INTEGER NOT NULL, cost_usd REAL NOT NULL, agent_ms REAL NOT NULL,
      verifier_ms REAL NOT NULL, total_ms REAL NOT NULL, started_at TEXT NOT NULL,
      finished_at TEXT NOT NULL, attempts INTEGER NOT NULL,
      PRIMARY KEY (config, skill, requirement, arm, repeat));
    CREATE TABLE attempts (id INTEGER PRIMARY KEY AUTOINCREMENT, config TEXT NOT NULL,
      skill TEXT NOT NULL, requirement TEXT NOT NULL, arm TEXT NOT NULL, repeat INTEGER NOT NULL,
      attempt INTEGER NOT NULL, outcome TEXT NOT NULL, error TEXT, cost_usd REAL NOT NULL,
      started_at TEXT NOT NULL, finished_at TEXT NOT NULL);`);
    database
      .prepare(
        `INSERT INTO results VALUES ('c','s','r1','with',1,'completed',0.75,3,4,'[]','["timeout"]',
        '{}',NULL,1,'abc','{}',1,0,2,0.5,1,2,4,'2026-01-01T00:00:00.000Z','2026-01-01T00:00:01.000Z',1)`,
      )
      .run();
    database.close();
  }

  it("reads a store of the unversioned 0.1 format read-only, and upgrades it when opened to write", () => {
    writeVersionZeroStore();
    const reader = ResultsStore.openReadOnly(directory);
    try {
      const [row] = reader.results();
      expect(row?.passRatio).toBe(0.75);
      expect(row?.flags).toEqual(["timeout"]);
      expect(row?.verifier).toBeUndefined();
    } finally {
      reader.close();
    }
    const writer = ResultsStore.open(directory);
    try {
      writer.recordResult({
        ...scored,
        requirement: "r2",
        verifier: { output: "E   ModuleNotFoundError", exitCode: 2, durationMs: 5 },
      });
      const rows = writer.results();
      expect(rows.map((result) => result.requirement)).toEqual(["r1", "r2"]);
      expect(rows[1]?.verifier?.output).toBe("E   ModuleNotFoundError");
    } finally {
      writer.close();
    }
    const database = new Database(join(directory, RESULTS_FILE), { readonly: true });
    expect(database.pragma("user_version", { simple: true })).toBe(RESULTS_STORE_VERSION);
    database.close();
  });

  it("migrates a 0.1 store to variant arms, patches and fingerprints, keeping its rows (migration 3)", () => {
    writeVersionZeroStore();
    const writer = ResultsStore.open(directory);
    try {
      writer.recordResult({
        ...scored,
        arm: "variant:v2",
        patch: {
          diff: "diff --git a/x b/x\n",
          length: 20,
          files: 1,
          truncated: false,
          redacted: false,
        },
        fingerprint: { digest: "f".repeat(64), inputs: { sandbox: "local" } },
        provenance: { kind: "reused", runDir: "/runs/a", key: "c/s/r1/without#1" },
      });
      const rows = writer.results();
      expect(rows.map((row) => `${row.requirement}/${row.arm}`)).toEqual([
        "r1/variant:v2",
        "r1/with",
      ]);
      expect(rows[0]?.patch?.files).toBe(1);
      expect(rows[0]?.provenance).toEqual({
        kind: "reused",
        runDir: "/runs/a",
        key: "c/s/r1/without#1",
      });
      expect(writer.resultsWithFingerprint("f".repeat(64)).map((row) => row.arm)).toEqual([
        "variant:v2",
      ]);
      // The widened CHECK still refuses an arm that is neither fixed nor a named variant.
      expect(() => writer.recordResult({ ...scored, arm: "variant:" as "variant:x" })).toThrow();
      expect(() =>
        writer.recordResult({ ...scored, arm: "both" as "with", requirement: "r9" }),
      ).toThrow();
    } finally {
      writer.close();
    }
  });

  it("refuses a store written by a newer format, naming the file", () => {
    const database = new Database(join(directory, RESULTS_FILE));
    database.pragma(`user_version = ${RESULTS_STORE_VERSION + 1}`);
    database.close();
    expect(() => ResultsStore.openReadOnly(directory)).toThrow(/newer skillsmith/);
    expect(() => ResultsStore.open(directory)).toThrow(/newer skillsmith/);
  });

  it("refuses a SQLite file that is not a results store", () => {
    const database = new Database(join(directory, RESULTS_FILE));
    database.exec("CREATE TABLE other (x)");
    database.close();
    expect(() => ResultsStore.openReadOnly(directory)).toThrow(/not a skillsmith results store/);
  });

  it("never writes into a SQLite file of someone else's, and names it", () => {
    const database = new Database(join(directory, RESULTS_FILE));
    database.exec("CREATE TABLE other (x)");
    database.close();
    expect(() => ResultsStore.open(directory)).toThrow(/not a skillsmith results store/);
    const check = new Database(join(directory, RESULTS_FILE), { readonly: true });
    const tables = check.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all();
    check.close();
    expect(tables).toEqual([{ name: "other" }]);
  });

  it("turns a garbage or truncated file into one input error naming the file", async () => {
    const file = join(directory, RESULTS_FILE);
    await writeFile(file, "this is not an SQLite database, just text\n".repeat(200));
    for (const open of [
      () => ResultsStore.open(directory),
      () => ResultsStore.openReadOnly(directory),
    ]) {
      const error = (() => {
        try {
          open().close();
          return undefined;
        } catch (caught) {
          return caught as InputError;
        }
      })();
      expect(error).toBeInstanceOf(InputError);
      expect(error?.code).toBe("bench.results-store-damaged");
      expect(error?.message).toContain(file);
      expect(error?.message).toContain("move it aside");
    }
    // A real store cut in half: its pages are gone, not its header.
    await rm(file);
    const writer = ResultsStore.open(directory);
    for (let repeat = 1; repeat <= 40; repeat += 1) {
      writer.recordResult({ ...scored, repeat, trajectory: { log: "x".repeat(2_000) } });
    }
    writer.close();
    const { size } = await stat(file);
    await truncate(file, Math.floor(size / 2));
    expect(() => {
      const reader = ResultsStore.openReadOnly(directory);
      try {
        reader.results();
      } finally {
        reader.close();
      }
    }).toThrow(/results-store|damaged|not a readable results store/);
  });

  it("redacts every field of a result and an attempt's error on the way in", () => {
    registerSecret("store-boundary-secret-91c2");
    const store = ResultsStore.open(directory);
    try {
      store.recordInfraAttempt({
        ...key,
        attempt: 1,
        error: "endpoint said store-boundary-secret-91c2",
        costUsd: 0,
        startedAt: scored.startedAt,
        finishedAt: scored.finishedAt,
      });
      store.recordResult({
        ...scored,
        checks: [
          { name: "t", status: "fail", message: "assert 'store-boundary-secret-91c2' == ''" },
        ],
        verifier: { output: "key store-boundary-secret-91c2", exitCode: 1, durationMs: 1 },
      });
      const [stored] = store.results();
      expect(stored?.checks[0]?.message).toBe("assert '[REDACTED]' == ''");
      expect(stored?.verifier?.output).toBe("key [REDACTED]");
      expect(store.attempts()[0]?.error).toBe("endpoint said [REDACTED]");
    } finally {
      store.close();
    }
  });

  it("keeps the head and the tail of long verifier output", () => {
    const output = `${"a".repeat(100)}${"m".repeat(1000)}${"z".repeat(100)}`;
    const capped = capVerifierOutput(output, 200);
    expect(capped.startsWith("a".repeat(100))).toBe(true);
    expect(capped.endsWith("z".repeat(100))).toBe(true);
    expect(capped).toContain("1000 characters left out");
    expect(capVerifierOutput("short", 200)).toBe("short");
  });
});
