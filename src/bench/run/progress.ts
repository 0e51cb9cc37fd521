/** A run's progress: the counters a run reports while it goes, and the one line that shows them. */
import { formatRunKey, type ResultsStore, type RunKey } from "../store/results.js";

export interface RunProgress {
  /** Runs this invocation has to do (excluding those already stored). */
  readonly total: number;
  /** Runs already stored before this invocation started. */
  readonly alreadyDone: number;
  /** Runs scored by this invocation. */
  readonly done: number;
  readonly running: number;
  /** Runs given up after every attempt failed for infrastructure reasons. */
  readonly failed: number;
  /** Recorded cost in the whole run directory. */
  readonly costUsd: number;
  /** Estimated time to finish, once at least one run has finished. */
  readonly etaMs?: number;
  /** The run that just finished, when this update is about one. */
  readonly last?: RunKey & { readonly status: string; readonly passRatio?: number };
}

/** A run's counters at one moment; `etaMs` is undefined until it can be estimated. */
export type ProgressCounters = Omit<RunProgress, "costUsd" | "etaMs" | "last"> & {
  readonly etaMs: number | undefined;
};

/**
 * The `progress(last?)` function of a run: each call reports the counters read at that moment
 * to `onProgress`, with the cost recorded in the store; nothing is read without a listener.
 */
export function progressReporter(
  options: { readonly onProgress?: (progress: RunProgress) => void },
  store: Pick<ResultsStore, "totalCostUsd">,
  counters: () => ProgressCounters,
): (last?: RunProgress["last"]) => void {
  return (last) => {
    if (options.onProgress === undefined) return;
    const { total, alreadyDone, done, running, failed, etaMs } = counters();
    options.onProgress({
      total,
      alreadyDone,
      done,
      running,
      failed,
      costUsd: store.totalCostUsd(),
      ...(etaMs === undefined ? {} : { etaMs }),
      ...(last === undefined ? {} : { last }),
    });
  };
}

function duration(milliseconds: number): string {
  const seconds = Math.round(milliseconds / 1000);
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  return minutes < 60
    ? `${minutes}m${String(seconds % 60).padStart(2, "0")}s`
    : `${Math.floor(minutes / 60)}h${String(minutes % 60).padStart(2, "0")}m`;
}

/** One line: `12/40 done, 2 running, 0 failed, $0.00, ETA 1m05s`. */
export function formatProgress(progress: RunProgress): string {
  const parts = [
    `${progress.done}/${progress.total} done`,
    `${progress.running} running`,
    `${progress.failed} failed`,
    `$${progress.costUsd.toFixed(2)}`,
  ];
  if (progress.alreadyDone > 0) parts.push(`${progress.alreadyDone} already stored`);
  if (progress.etaMs !== undefined && progress.done + progress.failed < progress.total) {
    parts.push(`ETA ${duration(progress.etaMs)}`);
  }
  return parts.join(", ");
}

export interface ProgressRenderer {
  readonly update: (progress: RunProgress) => void;
  /** Ends the updating line on a terminal. */
  readonly finish: () => void;
}

/**
 * Progress for a person on stderr: one line rewritten in place on a terminal; otherwise one
 * plain line per finished run (logs and CI keep every line readable).
 */
export function createProgressRenderer(
  write: (text: string) => void,
  isTerminal: boolean,
): ProgressRenderer {
  let drawn = false;
  return {
    update: (progress) => {
      if (isTerminal) {
        write(`\r\u001b[2K${formatProgress(progress)}`);
        drawn = true;
      } else if (progress.last !== undefined) {
        const outcome =
          progress.last.passRatio === undefined
            ? progress.last.status
            : // A pass ratio, not progress: "completed 100%" read as "finished".
              `${progress.last.status}, ${(100 * progress.last.passRatio).toFixed(0)}% of checks passed`;
        write(`${formatRunKey(progress.last)}: ${outcome} (${formatProgress(progress)})\n`);
      }
    },
    finish: () => {
      if (drawn) write("\n");
      drawn = false;
    },
  };
}
