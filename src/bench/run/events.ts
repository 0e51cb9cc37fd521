/**
 * What a run session tells its listener while it goes: typed events instead of free sentences,
 * so the CLI renders them and a library caller can act on them (count flagged runs, stop on a
 * warning) without parsing text. The older per-kind callbacks (`onProgress`, `onWarning`,
 * `onLog`) are fed from the same events, so both ways of listening see the same run.
 */
import type { LimitEnforcement } from "../../env/index.js";
import type { RunKey } from "../store/results.js";
import type { RunProgress } from "./progress.js";

/**
 * How much a warning matters: `notice` is worth showing (a fallback taken, a skill skipped),
 * `warning` weakens what the run measures (a limit not enforced, a retried failure), `danger`
 * means untrusted code runs without isolation.
 */
export type WarningSeverity = "notice" | "warning" | "danger";

export type RunEvent =
  | { readonly type: "progress"; readonly progress: RunProgress }
  | {
      readonly type: "warning";
      readonly severity: WarningSeverity;
      /** The sentence shown to a person (what `onWarning` receives). */
      readonly message: string;
    }
  /** Long preparation work (environments, the verifier check), line by line. */
  | { readonly type: "log"; readonly line: string }
  /** The connection to a scheduler's backend (Redis) dropped or came back. */
  | { readonly type: "connection"; readonly message: string }
  | {
      readonly type: "run-stored";
      readonly key: RunKey;
      readonly status: string;
      readonly passRatio: number;
      readonly flags: readonly string[];
      /** Copied from an earlier run directory (`--reuse`) instead of executed. */
      readonly reused: boolean;
    }
  /** A stored run carries flags: reports show it as unmeasured or doubtful. */
  | { readonly type: "run-flagged"; readonly key: RunKey; readonly flags: readonly string[] };

export type RunListener = (event: RunEvent) => void;

/** The ways a caller can listen to a run: one listener for every event, or one per kind. */
export interface RunListeners {
  readonly onEvent?: RunListener;
  readonly onProgress?: (progress: RunProgress) => void;
  /** Notes worth showing a person (fallbacks, skipped skills). */
  readonly onWarning?: (message: string) => void;
  /** Environment preparation and the check, line by line (long work, for stderr). */
  readonly onLog?: (line: string) => void;
  /** Reconnects and outages of a queue's Redis connection. */
  readonly onConnectionEvent?: (message: string) => void;
}

/** One emitter over every listener a caller gave; `listening` says whether progress is wanted. */
export interface RunEmitter {
  readonly emit: RunListener;
  readonly listensToProgress: boolean;
  readonly warn: (message: string, severity?: WarningSeverity) => void;
  readonly log: (line: string) => void;
}

export function runEmitter(listeners: RunListeners): RunEmitter {
  const emit: RunListener = (event) => {
    listeners.onEvent?.(event);
    switch (event.type) {
      case "progress":
        listeners.onProgress?.(event.progress);
        return;
      case "warning":
        listeners.onWarning?.(event.message);
        return;
      case "log":
        listeners.onLog?.(event.line);
        return;
      case "connection":
        listeners.onConnectionEvent?.(event.message);
        return;
      default:
        return;
    }
  };
  return {
    emit,
    listensToProgress: listeners.onEvent !== undefined || listeners.onProgress !== undefined,
    warn: (message, severity = "notice") => emit({ type: "warning", severity, message }),
    log: (line) => emit({ type: "log", line }),
  };
}

const LIMITS = ["memory", "processes", "cpu"] as const;

/**
 * The notes of a sandbox's limit enforcement that say a limit is not enforced, decided by the
 * enforcement's own flags (not by the wording of the note): a note about a limit the backend
 * does not enforce, or every note of a backend with no mechanism at all.
 */
export function unenforcedLimitNotes(enforcement: LimitEnforcement): string[] {
  if (enforcement.mechanism === "none") return [...enforcement.notes];
  const missing = LIMITS.filter((limit) => !enforcement[limit]);
  return enforcement.notes.filter((note) => missing.some((limit) => note.startsWith(`${limit}:`)));
}
