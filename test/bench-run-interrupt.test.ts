/**
 * Ctrl-C on a real `skillsmith bench run` (issue 28, item 5), end to end with the built CLI: the
 * replay agent on a tiny generated suite (no model), a shell verifier slow enough (0.3 s) that the
 * interrupt lands halfway. After SIGINT the CLI prints "interrupted: k of n runs stored … Resume
 * with: <command>"; that command, run verbatim in a shell where `skillsmith` is the built CLI,
 * finishes the run: n runs, each once, the k stored before untouched, every score as planned.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ResultsStore } from "../src/bench/store/results.js";
import { runProcess } from "../src/core/process.js";
import { removeRunRoot, writeReplaySuite } from "./support/suites.js";

const repositoryRoot = resolve(import.meta.dirname, "..");
const builtCli = join(repositoryRoot, "dist", "cli", "main.js");
const REQUIREMENTS = 5;
const PLANNED = 2 * REQUIREMENTS;

let root: string;
let suite: string;
let predictions: string;
let bin: string;

interface StoredRun {
  readonly key: string;
  readonly passRatio: number;
  readonly finishedAt: string;
}

function storedRuns(runDir: string): StoredRun[] {
  if (!existsSync(join(runDir, "results.sqlite"))) return [];
  let store: ResultsStore;
  try {
    store = ResultsStore.openReadOnly(runDir);
  } catch {
    // Not written yet: nothing stored.
    return [];
  }
  try {
    return store.results().map((result) => ({
      key: `${result.requirement}/${result.arm}#${result.repeat}`,
      passRatio: result.passRatio,
      finishedAt: result.finishedAt,
    }));
  } finally {
    store.close();
  }
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "bench-run-interrupt-"));
  ({ suite, predictions } = await writeReplaySuite(root, {
    requirements: REQUIREMENTS,
    verifierSleepSeconds: 0.3,
  }));
  // `skillsmith` as a new shell of the user finds it: the built CLI.
  bin = join(root, "bin");
  await mkdir(bin);
  await writeFile(
    join(bin, "skillsmith"),
    `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(builtCli)} "$@"\n`,
    { mode: 0o755 },
  );
});

afterAll(async () => {
  if (root !== undefined) await removeRunRoot(root);
});

describe.skipIf(!existsSync(builtCli))("bench run interrupted by Ctrl-C [needs dist/]", () => {
  it("prints what it stored and a resume command that finishes the run as planned", async () => {
    const runDir = join(root, "run");
    const environment = {
      ...process.env,
      SKILLSMITH_CACHE_DIR: join(root, "cache"),
      PATH: `${bin}:${dirname(process.execPath)}:${process.env.PATH ?? "/usr/bin:/bin"}`,
    };
    const child = spawn(
      process.execPath,
      [
        builtCli,
        "bench",
        "run",
        suite,
        "--predictions",
        predictions,
        "--out",
        runDir,
        "--sandbox",
        "unsafe",
        "--concurrency",
        "1",
      ],
      { cwd: root, env: environment, stdio: ["ignore", "pipe", "pipe"] },
    );
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.stdout.resume();
    const exited = new Promise<number | null>((done) => child.on("exit", (code) => done(code)));
    let atInterrupt = 0;
    for (let waited = 0; waited < 90_000 && atInterrupt < 3; waited += 50) {
      await new Promise((done) => setTimeout(done, 50));
      atInterrupt = storedRuns(runDir).length;
    }
    child.kill("SIGINT");
    expect(await exited, stderr).toBe(130);
    const before = storedRuns(runDir);
    // The interrupt must land halfway for the test to mean anything.
    expect(before.length).toBeGreaterThanOrEqual(3);
    expect(before.length).toBeLessThan(PLANNED);

    const line = stderr.split("\n").find((text) => text.startsWith("interrupted: "));
    expect(line, stderr).toBeDefined();
    expect(line).toContain(`interrupted: ${before.length} of ${PLANNED} runs stored in ${runDir}`);
    const resume = /Resume with: (.+)$/.exec(line ?? "")?.[1];
    expect(resume).toMatch(/^skillsmith bench run /);
    expect(resume).toContain("--resume");

    // The printed command, verbatim, in a shell.
    const resumed = await runProcess("bash", ["-c", resume ?? "false"], {
      cwd: root,
      env: environment,
      timeoutMs: 120_000,
    });
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    expect(resumed.stderr).not.toContain("interrupted:");

    const after = storedRuns(runDir);
    expect(after).toHaveLength(PLANNED);
    expect(new Set(after.map((run) => run.key)).size).toBe(PLANNED);
    // None lost, none scored again: the runs stored before the interrupt are the same rows.
    for (const run of before) expect(after).toContainEqual(run);
    // By hand (writeReplaySuite): with = 1 everywhere; without = 1 for odd k, 0.5 for even k.
    for (let k = 1; k <= REQUIREMENTS; k += 1) {
      expect(after.find((run) => run.key === `r${k}/with#1`)?.passRatio).toBe(1);
      expect(after.find((run) => run.key === `r${k}/without#1`)?.passRatio).toBe(
        k % 2 === 1 ? 1 : 0.5,
      );
    }
  }, 240_000);
});
