import { stat } from "node:fs/promises";
import { join, resolve } from "node:path";
import { UsageError } from "../../core/errors.js";
import { readManifest } from "../store/manifest.js";
import { RESULTS_FILE, ResultsStore } from "../store/results.js";
import { type BenchReport, type BuildReportOptions, buildReport } from "./report.js";

/** The report of a run directory, read from its store and manifest (read-only; nothing runs). */
export async function reportRunDir(
  runDir: string,
  options: Omit<BuildReportOptions, "manifest" | "infraAttempts"> = {},
): Promise<BenchReport> {
  const directory = resolve(runDir);
  if ((await stat(join(directory, RESULTS_FILE)).catch(() => undefined)) === undefined) {
    throw new UsageError(
      "report-no-results",
      `${directory} is not a run directory (no ${RESULTS_FILE}); run \`skillsmith bench run <suite> --out ${runDir}\` first`,
    );
  }
  const manifest = await readManifest(directory);
  const store = ResultsStore.openReadOnly(directory);
  try {
    const infraAttempts = store
      .attempts()
      .filter((attempt) => attempt.outcome === "infra_error").length;
    return buildReport(store.results(), {
      ...options,
      ...(manifest === undefined ? {} : { manifest }),
      infraAttempts,
    });
  } finally {
    store.close();
  }
}
