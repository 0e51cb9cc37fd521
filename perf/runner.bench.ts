import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSandbox } from "../src/bench/run/prepare.js";
import { runSuite } from "../src/bench/run/runner.js";
import { ResultsStore } from "../src/bench/store/results.js";
import type { SandboxV1 } from "../src/env/index.js";
import { treeDigest } from "../src/env/workspace/digest.js";
import { git } from "../test/support/git.js";
import { type Benchmark, type BenchmarkRow, measure, summarise } from "./harness.js";
import {
  generateRepository,
  repositoryFromEnvironment,
  starterWorkflowsBundle,
} from "./repositories.js";
import { writeBenchSuite } from "./suites.js";

const requirements = 8;
const TARGET_MS = 150;

interface Repository {
  readonly label: string;
  /** Undefined: the suite's generated 20-file repository. */
  readonly source?: { readonly path: string; readonly commit: string };
}

async function largeRepository(root: string): Promise<Repository> {
  const given = await repositoryFromEnvironment();
  if (given !== undefined) {
    return { label: given.label, source: { path: given.path, commit: given.commit } };
  }
  const generated = await generateRepository(join(root, "generated-3000"), { files: 3000 });
  return {
    label: "generated, 3000 files (set SKILLSMITH_BENCH_REPOSITORY for a real one)",
    source: generated,
  };
}

async function starterWorkflows(): Promise<Repository> {
  const bundle = starterWorkflowsBundle();
  return {
    label: "actions/starter-workflows bundle (506 files)",
    source: { path: bundle, commit: "affda94109f2228d5a7f542a28d23272ae31e00b" },
  };
}

/** Total − agent − verifier of every run in a results store. */
function overheadsOf(runDir: string): { overheads: number[]; scored: boolean } {
  const store = ResultsStore.openReadOnly(runDir);
  try {
    const results = store.results();
    // Every run must be scored as designed (the file exists in both arms) and its change
    // captured (the patch adds exactly that file), or the timing measured something else.
    const scored =
      results.length === 2 * requirements &&
      results.every(
        (result) =>
          result.passRatio === 1 &&
          result.patch?.incomplete === undefined &&
          result.patch?.files === 1 &&
          result.patch.diff.startsWith(
            `diff --git a/out/${result.requirement}.txt b/out/${result.requirement}.txt\nnew file mode 100644\n`,
          ),
      );
    return {
      overheads: results.map((result) => result.totalMs - result.agentMs - result.verifierMs),
      scored,
    };
  } finally {
    store.close();
  }
}

/** A clone with its `.git`, as a prepared base holds it, to time one full-tree digest. */
async function digestBaseline(root: string, repository: Repository): Promise<number | undefined> {
  if (repository.source === undefined) return undefined;
  const clone = join(root, "digest-clone");
  await git(root, "clone", "-q", "--no-checkout", repository.source.path, clone);
  await git(clone, "checkout", "-q", repository.source.commit);
  try {
    return (await measure(() => treeDigest(clone), { iterations: 3, warmup: 1 })).medianMs;
  } finally {
    await rm(clone, { recursive: true, force: true });
  }
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
      const rows: BenchmarkRow[] = [];
      const repositories: Repository[] = [
        { label: "generated, 20 files" },
        await starterWorkflows(),
        await largeRepository(root),
      ];
      for (const [index, repository] of repositories.entries()) {
        const folder = join(root, `repository-${index}`);
        const { suite, predictions } = await writeBenchSuite(folder, {
          name: "bench",
          requirements,
          ...(repository.source === undefined ? {} : { repository: repository.source }),
          // Nothing to install: the replay agent and the shell verifier need no dependencies.
          ...(repository.source === undefined ? {} : { setup: ["true"] }),
        });
        const cacheDir = join(folder, "cache");
        // Prepare the base once, outside the timings (a real run prepares it once per skill too).
        await runSuite({ suite, runDir: join(folder, "warmup"), predictions, sandbox, cacheDir });
        const overheads: number[] = [];
        const perRun: Record<1 | 2, number[]> = { 1: [], 2: [] };
        let scoredEverywhere = true;
        // Runs per minute only on the reference repository; the others time overhead only.
        const concurrencies = index === 0 ? ([1, 2] as const) : ([1] as const);
        const samples = index === 0 ? 3 : 2;
        for (const concurrency of concurrencies) {
          for (let sample = 0; sample < samples; sample += 1) {
            const runDir = join(folder, `c${concurrency}-s${sample}`);
            const started = performance.now();
            const summary = await runSuite({
              suite,
              runDir,
              predictions,
              sandbox,
              cacheDir,
              concurrency,
            });
            perRun[concurrency].push((performance.now() - started) / summary.executed);
            const measured = overheadsOf(runDir);
            scoredEverywhere &&= measured.scored;
            if (concurrency === 1) overheads.push(...measured.overheads);
          }
        }
        const check = scoredEverywhere
          ? "all runs scored 100% and their change captured, as designed"
          : "SOME RUNS MISSCORED OR THEIR CHANGE NOT CAPTURED";
        const overhead = summarise(overheads);
        const digestMs = await digestBaseline(folder, repository);
        rows.push({
          case: `overhead per run (replay), ${repository.label}`,
          medianMs: overhead.medianMs,
          ...(digestMs === undefined
            ? {}
            : { baselineMs: digestMs, ratio: digestMs / overhead.medianMs }),
          target: `< ${TARGET_MS} ms`,
          met: overhead.medianMs < TARGET_MS,
          note: `${sandboxNote}; excludes agent and verifier time; ${overheads.length} runs, max ${overhead.maxMs.toFixed(0)} ms; ${digestMs === undefined ? "" : "baseline: one full-tree digest of the clone; "}${check}`,
        });
        if (index === 0) {
          for (const concurrency of [1, 2] as const) {
            const measured = summarise(perRun[concurrency]);
            rows.push({
              case: `wall time per run, concurrency ${concurrency}, ${repository.label}`,
              medianMs: measured.medianMs,
              note: `${(60_000 / measured.medianMs).toFixed(0)} runs/minute (${2 * requirements} runs per sample, ${samples} samples); ${check}`,
            });
          }
        }
        await rm(folder, { recursive: true, force: true });
      }
      return rows;
    } finally {
      await sandbox.dispose?.();
      await rm(root, { recursive: true, force: true });
    }
  },
};

export default benchmark;
