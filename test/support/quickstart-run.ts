/**
 * The quickstart evaluation (40 scored runs of the bundled suite in sandboxes, 180 s at load 25)
 * made once per test run and copied into each test file that reads it (the report, the dashboard,
 * the evaluation's own checks), so each file may write into its copy as a user's run would.
 */
import { cp } from "node:fs/promises";
import { join, relative } from "node:path";
import { reportRunDir } from "../../src/bench/analysis/load.js";
import {
  type QuickstartEvaluation,
  runQuickstartEvaluation,
} from "../../src/bench/run/quickstart.js";
import { sharedFixture } from "./shared-fixtures.js";

export interface QuickstartRun {
  /** The evaluation, with `runDir` (and the summary's) pointing at this file's copy. */
  readonly evaluation: QuickstartEvaluation;
  /** The warnings the evaluation gave while it ran. */
  readonly warnings: readonly string[];
}

type StoredEvaluation = Omit<QuickstartEvaluation, "report"> & { warnings: string[] };

/** A copy of the run's shared quickstart evaluation at `<root>/run`, with its report. */
export async function quickstartRunCopy(root: string): Promise<QuickstartRun> {
  const shared = await sharedFixture<StoredEvaluation>("quickstart-evaluation", async (folder) => {
    const warnings: string[] = [];
    const { report: _report, ...evaluation } = await runQuickstartEvaluation({
      runDir: join(folder, "run"),
      cacheDir: join(folder, "cache"),
      onWarning: (message) => warnings.push(message),
    });
    return { ...evaluation, warnings };
  });
  const { warnings, ...stored } = shared.value;
  const runDir = join(root, "run");
  await cp(join(shared.folder, "run"), runDir, { recursive: true });
  const ownRunDir = join(runDir, relative(join(shared.folder, "run"), stored.runDir));
  const evaluation: QuickstartEvaluation = {
    ...stored,
    runDir: ownRunDir,
    summary: { ...stored.summary, runDir: ownRunDir },
    report: await reportRunDir(ownRunDir),
  };
  return { evaluation, warnings };
}
