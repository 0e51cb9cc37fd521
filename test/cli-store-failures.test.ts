/**
 * Honest failure through the real binary (`dist/cli/main.js`): a damaged, truncated, foreign or
 * newer `results.sqlite`, a full disk (a small tmpfs) and an unwritable run directory (a
 * read-only bind mount: root ignores permission bits) each give one line on stderr naming the
 * file and what to do, exit 2 (the file is the user's to fix) or 3 (the machine), no stack
 * trace, and nothing already stored is lost.
 *
 * Before: a damaged store, a wrong schema and a full disk ended in `internal error` with a stack
 * trace (exit 3 for the wrong reason, and nothing said which file).
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, stat, truncate, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { runSuite } from "../src/bench/run/runner.js";
import { RESULTS_FILE, ResultsStore } from "../src/bench/store/results.js";
import { runProcess } from "../src/core/process.js";
import { removeRunRoot, writeReplaySuite } from "./support/suites.js";

// Each test spawns the binary two or three times (a few seconds each on a shared machine).
vi.setConfig({ testTimeout: 120_000 });

const binary = resolve(import.meta.dirname, "..", "dist", "cli", "main.js");
const isRoot = process.getuid?.() === 0;

let root: string;
let suite: string;
let predictions: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "cli-store-failures-"));
  ({ suite, predictions } = await writeReplaySuite(root, {
    requirements: 1,
    verifierSleepSeconds: 0,
  }));
});

afterAll(async () => {
  await removeRunRoot(root);
});

interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** The built binary as a process, with the cache in the test's folder. */
function cli(args: string[]): Promise<CliRun> {
  return new Promise((resolveRun) => {
    execFile(
      process.execPath,
      [binary, ...args],
      { env: { ...process.env, SKILLSMITH_CACHE_DIR: join(root, "cache") }, timeout: 120_000 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : 99;
        resolveRun({ code, stdout, stderr });
      },
    );
  });
}

/** `bench run` of the one-requirement replay suite into `out`, in bubblewrap-free unsafe mode. */
function benchRun(out: string, extra: string[] = []): Promise<CliRun> {
  return cli([
    "bench",
    "run",
    suite,
    "--out",
    out,
    "--predictions",
    predictions,
    "--sandbox",
    "unsafe",
    ...extra,
  ]);
}

/** The lines of stderr a failure wrote (progress and warnings come before them). */
function failureLines(run: CliRun): string[] {
  return run.stderr
    .split("\n")
    .filter((line) => /^(error|internal error|\s+caused by|\s+at )/.test(line));
}

function expectOneLine(run: CliRun, code: number, ...parts: string[]): void {
  const lines = failureLines(run);
  expect(lines, run.stderr).toHaveLength(1);
  expect(run.code, run.stderr).toBe(code);
  for (const part of parts) expect(lines[0]).toContain(part);
  expect(run.stderr).not.toMatch(/^\s+at /m);
  expect(run.stderr).not.toContain("internal error");
}

/** A run directory holding both arms' results, written in-process (faster than the binary). */
async function populate(runDir: string): Promise<void> {
  const summary = await runSuite({
    suite,
    runDir,
    predictions,
    sandbox: "unsafe",
    cacheDir: join(root, "cache"),
  });
  expect(summary.executed).toBe(2);
}

function storedCount(runDir: string): number {
  const store = ResultsStore.openReadOnly(runDir);
  try {
    return store.results().length;
  } finally {
    store.close();
  }
}

describe.skipIf(!existsSync(binary))("damaged stores through the binary", () => {
  it("garbage in results.sqlite: exit 2, one line naming the file", async () => {
    const runDir = join(root, "garbage");
    await mkdir(runDir);
    await writeFile(join(runDir, RESULTS_FILE), "not a database\n".repeat(500));
    expectOneLine(await benchRun(runDir), 2, join(runDir, RESULTS_FILE), "move it aside");
  });

  it("a truncated store: exit 2, one line naming the file", async () => {
    const runDir = join(root, "truncated");
    await populate(runDir);
    const file = join(runDir, RESULTS_FILE);
    await truncate(file, Math.floor((await stat(file)).size / 3));
    expectOneLine(await cli(["bench", "report", runDir]), 2, file);
  });

  it("a foreign SQLite file: exit 2, and it is not written into", async () => {
    const runDir = join(root, "foreign");
    await mkdir(runDir);
    const database = new Database(join(runDir, RESULTS_FILE));
    database.exec("CREATE TABLE invoices (id INTEGER)");
    database.close();
    expectOneLine(await benchRun(runDir), 2, join(runDir, RESULTS_FILE), "not a skillsmith");
    const check = new Database(join(runDir, RESULTS_FILE), { readonly: true });
    expect(check.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all()).toEqual([
      { name: "invoices" },
    ]);
    check.close();
  });

  it("a store from a newer skillsmith: exit 2, one line saying to upgrade", async () => {
    const runDir = join(root, "newer");
    await mkdir(runDir);
    const database = new Database(join(runDir, RESULTS_FILE));
    database.pragma("user_version = 999");
    database.close();
    expectOneLine(await cli(["bench", "report", runDir]), 2, join(runDir, RESULTS_FILE), "upgrade");
  });
});

/** Runs `mount` and friends; the tests below need root. */
async function sh(command: string): Promise<void> {
  const result = await runProcess("sh", ["-c", command]);
  if (result.exitCode !== 0) throw new Error(`${command}: ${result.stderr}`);
}

describe.skipIf(!existsSync(binary) || !isRoot)("the disk and the folder (root: mounts)", () => {
  it("a full disk: exit 3, one line naming the file, and the results stored before are kept", async () => {
    const disk = join(root, "small-disk");
    await mkdir(disk);
    await sh(`mount -t tmpfs -o size=2m tmpfs '${disk}'`);
    try {
      const runDir = join(disk, "run");
      await populate(runDir);
      expect(storedCount(runDir)).toBe(2);
      // Fill what is left; dd stops at ENOSPC.
      await runProcess("dd", ["if=/dev/zero", `of=${join(disk, "filler")}`, "bs=64k"]);
      const run = await benchRun(runDir, ["--repeats", "3"]);
      expectOneLine(run, 3, runDir, "no space left");
      await rm(join(disk, "filler"));
      expect(storedCount(runDir)).toBe(2);
    } finally {
      await sh(`umount -l '${disk}'`);
    }
  });

  it("a disk that fills during the run: exit 3, one line, the results stored before it kept", async () => {
    const disk = join(root, "filling-disk");
    await mkdir(disk);
    await sh(`mount -t tmpfs -o size=2m tmpfs '${disk}'`);
    try {
      // Requirement r2's verifier fills the run directory's disk (under --sandbox unsafe it can
      // write there), so r1's two results are stored and r2's first one cannot be.
      const filling = await writeReplaySuite(await mkdtemp(join(root, "filling-")), {
        requirements: 2,
        verifierSleepSeconds: 0,
      });
      const check = join(
        filling.suite,
        "skills",
        "alpha",
        "requirements",
        "r2",
        "verifier",
        "check.sh",
      );
      await writeFile(
        check,
        `dd if=/dev/zero of='${join(disk, "filler")}' bs=64k 2>/dev/null\n${await readFile(check, "utf8")}`,
      );
      const runDir = join(disk, "run");
      const run = await cli([
        "bench",
        "run",
        filling.suite,
        "--out",
        runDir,
        "--predictions",
        filling.predictions,
        "--sandbox",
        "unsafe",
        // The verifier check would run r2's verifier, and fill the disk, before any agent runs:
        // this test is about a disk that fills between two stored results.
        "--no-check",
      ]);
      expectOneLine(run, 3, join(runDir, RESULTS_FILE), "no space left");
      await rm(join(disk, "filler"));
      const store = ResultsStore.openReadOnly(runDir);
      try {
        expect(
          store
            .results()
            .map((result) => `${result.requirement}/${result.arm}`)
            .sort(),
        ).toEqual(["r1/with", "r1/without"]);
      } finally {
        store.close();
      }
    } finally {
      await sh(`umount -l '${disk}'`);
    }
  });

  it("an unwritable run directory: exit 3, one line naming the file, nothing lost", async () => {
    const runDir = join(root, "read-only");
    await populate(runDir);
    await sh(`mount --bind '${runDir}' '${runDir}' && mount -o remount,bind,ro '${runDir}'`);
    try {
      const run = await benchRun(runDir, ["--repeats", "2"]);
      expectOneLine(run, 3, runDir);
      expect(failureLines(run)[0]).toMatch(/read-only|cannot be written|choose another --out/);
    } finally {
      await sh(`umount '${runDir}'`);
    }
    expect(storedCount(runDir)).toBe(2);
    const fresh = join(root, "read-only-parent");
    await mkdir(fresh);
    await sh(`mount --bind '${fresh}' '${fresh}' && mount -o remount,bind,ro '${fresh}'`);
    try {
      expectOneLine(await benchRun(join(fresh, "run")), 3, join(fresh, "run"));
    } finally {
      await sh(`umount '${fresh}'`);
    }
  });
});
