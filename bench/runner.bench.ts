/**
 * The paired runner's own cost. A generated suite (one skill, 8 requirements, a git repository of
 * a few files, a shell verifier writing JUnit XML) is run with the replay agent: 16 runs per
 * sample, in the bubblewrap sandbox when it works here (else unsafe, said in the note).
 *
 * Rows:
 * - orchestration overhead per paired run: for each stored run, total wall time minus agent time
 *   (the replay's `git apply`) minus verifier time, i.e. workspace materialisation, tree digest,
 *   required-file check, trajectory redaction, the SQLite transaction and clean-up; doubled for a
 *   pair. Median over all runs of the concurrency-1 samples. Target < 500 ms per pair.
 * - runs per minute at concurrency 1 and 2: wall time of a whole `runSuite` (manifest, store,
 *   scheduling included) divided by its runs; the note gives runs/minute.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSandbox, runSuite } from "../src/bench/run/runner.js";
import { ResultsStore } from "../src/bench/store/results.js";
import { runProcess } from "../src/core/process.js";
import type { SandboxV1 } from "../src/env/index.js";
import type { Benchmark, BenchmarkRow, Measurement } from "./harness.js";

const requirements = 8;
const samples = 3;

async function git(cwd: string, ...args: string[]): Promise<string> {
  const result = await runProcess("git", args, {
    cwd,
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: "bench",
      GIT_AUTHOR_EMAIL: "bench@example.com",
      GIT_COMMITTER_NAME: "bench",
      GIT_COMMITTER_EMAIL: "bench@example.com",
    },
  });
  if (result.exitCode !== 0) throw new Error(`git ${args.join(" ")}: ${result.stderr}`);
  return result.stdout.trim();
}

async function makeSuite(root: string): Promise<{ suite: string; predictions: string }> {
  const repo = join(root, "repo");
  await mkdir(join(repo, "src"), { recursive: true });
  for (let index = 0; index < 20; index += 1) {
    await writeFile(join(repo, "src", `module${index}.txt`), `content ${index}\n`.repeat(50));
  }
  await git(repo, "init", "-q", "-b", "main");
  await git(repo, "add", "-A");
  await git(repo, "-c", "commit.gpgsign=false", "commit", "-q", "-m", "init");
  const commit = await git(repo, "rev-parse", "HEAD");
  const suite = join(root, "suite");
  const skill = join(suite, "skills", "alpha");
  await mkdir(join(skill, "agent-skills", "alpha"), { recursive: true });
  await writeFile(
    join(suite, "suite.yaml"),
    "format: skillsmith-suite/1\nname: bench\nconfigurations:\n  - id: replay\n    agent: replay\n    limits: { timeoutSeconds: 60 }\n",
  );
  await writeFile(
    join(skill, "skill.yaml"),
    `repository:\n  path: ${repo}\n  commit: ${commit}\n  name: benchrepo\n`,
  );
  await writeFile(
    join(skill, "agent-skills", "alpha", "SKILL.md"),
    "---\nname: alpha\ndescription: Write result files. Use when a task asks for one.\n---\n\n# Alpha\n",
  );
  const lines: string[] = [];
  for (let k = 1; k <= requirements; k += 1) {
    const folder = join(skill, "requirements", `r${k}`);
    await mkdir(join(folder, "verifier"), { recursive: true });
    await writeFile(
      join(folder, "requirement.md"),
      `## Requirement\n\nWrite out/r${k}.txt.\n\n## File Operations\n\n- \`out/r${k}.txt\`\n\n## Acceptance Criteria\n\n- it exists\n`,
    );
    await writeFile(
      join(folder, "verifier", "check.sh"),
      `if [ -f "$SKILLSMITH_WORKSPACE/out/r${k}.txt" ]; then r='<testcase classname="r" name="exists"/>'; else r='<testcase classname="r" name="exists"><failure message="missing"/></testcase>'; fi\necho "<testsuite name=\\"r\\">$r</testsuite>" > junit.xml\n`,
    );
    await writeFile(
      join(folder, "verifier.yaml"),
      "command: sh check.sh\nfiles: [check.sh]\njunit: junit.xml\n",
    );
    for (const arm of ["without", "with"]) {
      const patch = `diff --git a/out/r${k}.txt b/out/r${k}.txt\nnew file mode 100644\n--- /dev/null\n+++ b/out/r${k}.txt\n@@ -0,0 +1 @@\n+${arm}\n`;
      lines.push(JSON.stringify({ skill: "alpha", requirement: `r${k}`, arm, patch }));
    }
  }
  const predictions = join(root, "predictions.jsonl");
  await writeFile(predictions, `${lines.join("\n")}\n`);
  return { suite, predictions };
}

function summarise(values: readonly number[]): Measurement {
  const sorted = [...values].sort((left, right) => left - right);
  const middle = Math.floor(sorted.length / 2);
  const median =
    sorted.length % 2 === 1
      ? (sorted[middle] as number)
      : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
  return {
    medianMs: median,
    minMs: sorted[0] as number,
    maxMs: sorted[sorted.length - 1] as number,
    iterations: values.length,
  };
}

const benchmark: Benchmark = {
  name: "runner",
  async run() {
    const root = await mkdtemp(join(tmpdir(), "skillsmith-runner-bench-"));
    let sandbox: SandboxV1;
    let sandboxNote: string;
    try {
      sandbox = await openSandbox("local");
      sandboxNote = "bubblewrap";
    } catch {
      sandbox = await openSandbox("unsafe");
      sandboxNote = "unsafe (bubblewrap unavailable)";
    }
    try {
      const { suite, predictions } = await makeSuite(root);
      const cacheDir = join(root, "cache");
      // Prepare the base once, outside the timings (a real run prepares it once per skill too).
      await runSuite({
        suite,
        runDir: join(root, "warmup"),
        predictions,
        sandbox,
        cacheDir,
      });
      const overheads: number[] = [];
      const perRun: Record<1 | 2, number[]> = { 1: [], 2: [] };
      let scoredEverywhere = true;
      for (const concurrency of [1, 2] as const) {
        for (let sample = 0; sample < samples; sample += 1) {
          const runDir = join(root, `c${concurrency}-s${sample}`);
          const started = performance.now();
          const summary = await runSuite({
            suite,
            runDir,
            predictions,
            sandbox,
            cacheDir,
            concurrency,
          });
          const wall = performance.now() - started;
          perRun[concurrency].push(wall / summary.executed);
          const store = ResultsStore.openReadOnly(runDir);
          try {
            const results = store.results();
            // Every run must be scored as designed (the file exists in both arms), or the
            // timing measured something else.
            if (
              results.length !== 2 * requirements ||
              results.some((result) => result.passRatio !== 1)
            ) {
              scoredEverywhere = false;
            }
            if (concurrency === 1) {
              for (const result of results) {
                overheads.push(2 * (result.totalMs - result.agentMs - result.verifierMs));
              }
            }
          } finally {
            store.close();
          }
        }
      }
      const check = scoredEverywhere ? "all runs scored 100% as designed" : "SOME RUNS MISSCORED";
      const overhead = summarise(overheads);
      const rows: BenchmarkRow[] = [
        {
          case: "orchestration overhead per paired run (replay)",
          medianMs: overhead.medianMs,
          target: "< 500 ms",
          met: overhead.medianMs < 500,
          note: `${sandboxNote}; excludes agent and verifier time; ${check}`,
        },
      ];
      for (const concurrency of [1, 2] as const) {
        const measured = summarise(perRun[concurrency]);
        rows.push({
          case: `wall time per run, concurrency ${concurrency}`,
          medianMs: measured.medianMs,
          note: `${(60_000 / measured.medianMs).toFixed(0)} runs/minute (${2 * requirements} runs per sample, ${samples} samples); ${check}`,
        });
      }
      return rows;
    } finally {
      await sandbox.dispose?.();
      await rm(root, { recursive: true, force: true });
    }
  },
};

export default benchmark;
