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
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSandbox, runSuite } from "../src/bench/run/runner.js";
import { ResultsStore } from "../src/bench/store/results.js";
import type { SandboxV1 } from "../src/env/index.js";
import { type Benchmark, type BenchmarkRow, summarise } from "./harness.js";
import { writeBenchSuite } from "./suites.js";

const requirements = 8;
const samples = 3;

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
      const { suite, predictions } = await writeBenchSuite(root, { name: "bench", requirements });
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
