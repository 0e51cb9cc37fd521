/** `skillsmith bench regrade`: a run's stored patches scored again with (new) verifiers. */
import { resolve } from "node:path";
import type { Command } from "commander";
import { regradeRunDir, renderReportText, reportRunDir } from "../../bench/index.js";
import { defaultCacheDir } from "../../env/index.js";
import { type CommandContext, log, printJson, printLines } from "../context.js";
import { sandboxKindHelp, sandboxKindOf } from "./bench-options.js";

export function registerRegrade(bench: Command, context: CommandContext): void {
  const { io } = context;
  bench
    .command("regrade")
    .description(
      "Re-score a run's stored patches with the suite's (new) verifiers, without running any agent; writes a new run directory and shows the changes",
    )
    .argument("<run-dir>", "the run directory to re-grade (left as it is)")
    .requiredOption("--out <run-dir>", "the new run directory")
    .option("--suite <dir>", "a suite with new verifiers (default: the suite the run used)")
    .option("--sandbox <kind>", sandboxKindHelp(), "local")
    .option("--json", "print {regrade, report} as JSON on stdout")
    .action(
      async (
        runDir: string,
        options: { out: string; suite?: string; sandbox: string; json?: boolean },
      ) => {
        const sandbox = sandboxKindOf(options);
        const summary = await regradeRunDir({
          runDir: resolve(io.cwd, runDir),
          outDir: resolve(io.cwd, options.out),
          ...(options.suite === undefined ? {} : { suite: resolve(io.cwd, options.suite) }),
          sandbox,
          cacheDir: defaultCacheDir(io.env),
          commandLine: [
            "skillsmith",
            "bench",
            "regrade",
            runDir,
            "--out",
            options.out,
            ...(options.suite === undefined ? [] : ["--suite", options.suite]),
            "--sandbox",
            options.sandbox,
          ],
          onWarning: (message) => log(io, message),
        });
        const report = await reportRunDir(summary.outDir);
        if (options.json === true) {
          printJson(io, { regrade: summary, report });
          return;
        }
        const percent = (value: number) => `${(100 * value).toFixed(0)}%`;
        const changed = summary.requirements.filter((item) => Math.abs(item.delta) > 1e-9);
        printLines(io, [
          `re-graded ${summary.runs.length} runs of ${summary.runDir} with ${summary.suite}: ${summary.rescored} re-scored, ${summary.kept} kept as they were; new run directory ${summary.outDir}`,
          "",
          "per requirement and arm, old → new verifier (mean over repeats):",
          ...summary.requirements.map(
            (item) =>
              `  ${item.config}/${item.skill}/${item.requirement} ${item.arm}: ${percent(item.old)} → ${percent(item.new)} (${item.delta > 0 ? "+" : ""}${item.delta.toFixed(1)} points)`,
          ),
          `${changed.length} of ${summary.requirements.length} changed`,
          "",
          ...renderReportText(report),
        ]);
      },
    );
}
