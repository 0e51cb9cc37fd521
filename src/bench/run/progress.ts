import { formatRunKey } from "../store/results.js";
import type { RunProgress } from "./runner.js";

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
            : `${progress.last.status} ${(100 * progress.last.passRatio).toFixed(0)}%`;
        write(`${formatRunKey(progress.last)}: ${outcome} (${formatProgress(progress)})\n`);
      }
    },
    finish: () => {
      if (drawn) write("\n");
      drawn = false;
    },
  };
}
