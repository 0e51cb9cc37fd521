/** `skillsmith bench report`: the verdicts of a run directory, as text, JSON or an HTML file. */
import { resolve } from "node:path";
import type { Command } from "commander";
import {
  buildStudySummary,
  renderReportText,
  renderStudyHtml,
  renderStudyText,
  reportRunDir,
} from "../../bench/index.js";
import { writeRedactedFile } from "../../model/index.js";
import { renderHtmlReport } from "../../report/index.js";
import { type CommandContext, log, printJson, printLines } from "../context.js";
import { collect, positiveReal } from "./bench-options.js";

interface ReportOptions {
  readonly detectEffect?: number;
  readonly targetPower?: number;
  readonly json?: boolean;
  readonly html?: string;
  readonly study?: boolean;
  readonly skill?: string[];
  readonly requirement?: string[];
}

export function registerReport(bench: Command, context: CommandContext): void {
  const { io } = context;
  bench
    .command("report")
    .description("Print the verdicts of a run directory: utility profiles, pooled figures, pairs")
    .argument("<run-dir>", "a run directory written by `bench run`")
    .option(
      "--skill <id>",
      "report only this skill (repeatable); its verdict covers the selected runs only",
      collect,
    )
    .option(
      "--requirement <id>",
      "report only this requirement, by id or skill/requirement (repeatable)",
      collect,
    )
    .option(
      "--detect-effect <points>",
      "effect (points) the design recommendation is for (default 10)",
      positiveReal("--detect-effect", Number.POSITIVE_INFINITY),
    )
    .option(
      "--target-power <p>",
      "power the design recommendation aims at, between 0 and 1 (default 0.8)",
      positiveReal("--target-power", 1),
    )
    .option(
      "--study",
      "print the study's summary tables instead: classes per configuration and overall, pass ratios without and with, timeout sensitivity, sign changes between configurations of one model, with BH q",
    )
    .option("--json", "print the report data as JSON")
    .option("--html <file>", "also write a self-contained HTML report (charts, tables) to <file>")
    .action(async (runDir: string, options: ReportOptions) => {
      const directory = resolve(io.cwd, runDir);
      const report = await reportRunDir(directory, {
        ...(options.detectEffect === undefined ? {} : { detectEffect: options.detectEffect }),
        ...(options.targetPower === undefined ? {} : { targetPower: options.targetPower }),
        filter: {
          ...(options.skill === undefined ? {} : { skills: options.skill }),
          ...(options.requirement === undefined ? {} : { requirements: options.requirement }),
        },
      });
      if (options.study === true) {
        const study = buildStudySummary(report);
        if (options.html !== undefined) {
          const target = resolve(io.cwd, options.html);
          const title = `Study summary: ${report.suite?.name ?? directory}`;
          await writeRedactedFile(target, renderStudyHtml(study, title), io.env);
          log(io, `wrote the study summary to ${target}`);
        }
        if (options.json === true) printJson(io, study);
        else if (options.html === undefined) printLines(io, renderStudyText(study));
        return;
      }
      if (options.html !== undefined) {
        const target = resolve(io.cwd, options.html);
        // Built from the redacted store; redacted again where it is written, so a field added
        // to the report later cannot carry a key into the file.
        await writeRedactedFile(target, renderHtmlReport(report, { source: directory }), io.env);
        log(io, `wrote the HTML report to ${target}`);
      }
      if (options.json === true) printJson(io, report);
      else if (options.html === undefined) printLines(io, renderReportText(report));
    });
}
