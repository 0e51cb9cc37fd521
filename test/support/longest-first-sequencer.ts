/**
 * The order vitest starts test files in (vitest.config.ts, `sequence.sequencer`): within each
 * group of tiers, the longest files first, so the last minutes of a run are short files filling
 * the workers and not one long file running alone while the other cores wait.
 *
 * Vitest orders by the durations of this machine's last run when it has them
 * (node_modules/.vite/vitest); a fresh clone, as CI runs, has none, and vitest then starts the
 * largest source files first, which put several minutes-long files last. So a file's expected
 * time is this machine's last duration for it when known, else the time measured below, else
 * unknown: unknown files (all of them shorter so far) come after every known one, the largest
 * source first (vitest's own guess, which it cannot make on a fresh clone either).
 */
import { statSync } from "node:fs";
import { relative } from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * Seconds per file in `npm test` on a fresh clone, two cores, three end-to-end workers (the
 * issue 33 measurement, 2 December 2026). Only the files long enough to decide the tail are
 * listed; a file that grows long shows up in the summary `npm test` prints at its end.
 *
 * The files that read the shared quickstart evaluation (test/support/quickstart-run.ts:
 * bench-run-quickstart, quickstart, report-html, report-view) are listed once, as report-view:
 * whichever of them starts first makes it while the others wait for it, so starting them all at
 * once would hold the other workers idle for minutes. quickstart took 263 s here while it made
 * an evaluation of its own; it now reads the shared one (its own work: 10-20 s of CPU).
 */
export const measuredSeconds: Readonly<Record<string, number>> = {
  // The fresh clone's full run with nothing else on the machine (session 9, 1,602 s in all).
  "test/report-view.test.ts": 380,
  "test/bench-v1-real.test.ts": 375,
  "test/verifier-defence.test.ts": 324,
  "test/env-verifier.test.ts": 144,
  "test/verifier-integrity.test.ts": 135,
  "test/package-install.test.ts": 128,
  "test/bench-queue.test.ts": 122,
  "test/synth-loop.test.ts": 113,
  "test/eval-suite.test.ts": 113,
  // Below that run's slowest ten, from the same run's per-file lines (each file's tests, without
  // its imports, so a few seconds under the summary's figure); files under 40 s are not listed.
  "test/bench-arms.test.ts": 92,
  "test/bench-run-resume.test.ts": 89,
  "test/bench-harbor-tasks.test.ts": 74,
  "test/bench-run-unsafe-clis.test.ts": 72,
  "test/synth-baselines.test.ts": 70,
  "test/bench-queue-parity.test.ts": 70,
  "test/env-workspace.test.ts": 67,
  "test/wiki-render.test.ts": 65,
  "test/verifier-channel.test.ts": 63,
  "test/report-broken-runs.test.ts": 63,
  "test/synth-humaneval-evaluator.test.ts": 57,
  "src/bench/run/patch-snapshot.test.ts": 56,
  "test/bench-check.test.ts": 55,
  "test/eval.test.ts": 50,
  "test/env-validate.test.ts": 49,
  "test/sandbox-backends.test.ts": 48,
  "test/bench-study.test.ts": 46,
  "test/harbor-reward-channel.test.ts": 42,
  "test/bench-run-limits.test.ts": 40,
};

export interface FileToOrder {
  /** The tiers' group (`sequence.groupOrder`): groups run one after another, in this order. */
  readonly group: number;
  /** Expected milliseconds, or undefined when nothing is known. */
  readonly expectedMs: number | undefined;
  /** The source's size: the guess among files of unknown length. */
  readonly sizeBytes: number;
}

/**
 * `files` (given in vitest's own order) by group, then longest expected first; files of unknown
 * length after the known ones of their group, the largest first, else in the order given.
 */
export function longestFirst<T>(files: readonly T[], describe: (file: T) => FileToOrder): T[] {
  const described = files.map((file, position) => ({ file, position, ...describe(file) }));
  described.sort((a, b) => {
    if (a.group !== b.group) return a.group - b.group;
    if (a.expectedMs !== undefined && b.expectedMs !== undefined && a.expectedMs !== b.expectedMs)
      return b.expectedMs - a.expectedMs;
    if (a.expectedMs !== undefined && b.expectedMs === undefined) return -1;
    if (a.expectedMs === undefined && b.expectedMs !== undefined) return 1;
    if (a.expectedMs === undefined && a.sizeBytes !== b.sizeBytes) return b.sizeBytes - a.sizeBytes;
    return a.position - b.position;
  });
  return described.map((entry) => entry.file);
}

export default class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    return longestFirst(await super.sort(files), (spec) => {
      const path = relative(root, spec.moduleId);
      const measured = measuredSeconds[path];
      const cached = this.ctx.cache.getFileTestResults(`${spec.project.name}:${path}`);
      return {
        group: spec.project.config.sequence.groupOrder,
        expectedMs: cached?.duration ?? (measured === undefined ? undefined : measured * 1000),
        sizeBytes: statSync(spec.moduleId, { throwIfNoEntry: false })?.size ?? 0,
      };
    });
  }
}
