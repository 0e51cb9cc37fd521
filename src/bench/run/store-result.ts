/** Committing a scored run to the results store, its large raw log to a file beside it. */
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { writeFileAtomic } from "../../core/fs.js";
import { redactKnownSecrets } from "../../model/index.js";
import { type ResultsStore, type RunResult, TRAJECTORIES_FOLDER } from "../store/results.js";

/** Raw logs longer than this go to a file under `trajectories/` instead of the row. */
const INLINE_LOG_LIMIT = 64 * 1024;

/**
 * Commit a result to the store: a raw log over the inline limit goes to a file under
 * `trajectories/` first, so the row never names a file that is not on disk.
 */
export async function storeRunResult(
  store: ResultsStore,
  runDir: string,
  unredacted: RunResult,
): Promise<RunResult> {
  // Redacted before anything is written, the trajectory file included.
  const result = redactKnownSecrets(unredacted);
  const trajectory = result.trajectory as { rawLog?: unknown } | null;
  const rawLog = typeof trajectory?.rawLog === "string" ? trajectory.rawLog : "";
  let stored = result;
  if (rawLog.length > INLINE_LOG_LIMIT) {
    const trajectoryFile = join(
      TRAJECTORIES_FOLDER,
      `${result.config}.${result.skill}.${result.requirement}.${result.arm}.${result.repeat}.a${result.attempts}-${randomBytes(4).toString("hex")}.log`,
    );
    await writeFileAtomic(join(runDir, trajectoryFile), rawLog);
    stored = {
      ...result,
      trajectory: { ...(trajectory as object), rawLog: `[in ${trajectoryFile}]` },
      trajectoryFile,
    };
  }
  store.recordResult(stored);
  return stored;
}
