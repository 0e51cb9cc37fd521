/**
 * `skillsmith bench review`: the suspicious runs of a run directory (the patch scan found
 * evidence, nothing else flagged them) and a person's decision on them.
 */
import { resolve } from "node:path";
import type { Command } from "commander";
import { UsageError } from "../../core/errors.js";
import { type CommandContext, printJson, printLines } from "../context.js";
import { collect } from "./bench-options.js";

interface ReviewOptions {
  readonly accept?: string[];
  readonly reject?: string[];
  readonly json?: boolean;
}

export function registerReview(bench: Command, context: CommandContext): void {
  const { io } = context;
  bench
    .command("review")
    .description(
      "List runs the patch scan found evidence in (their skill's verdict waits), and accept or reject them",
    )
    .argument("<run-dir>", "a run directory written by `bench run`")
    .option(
      "--accept <key>",
      "the findings are innocent: the verdict stands (a run key, or all; repeatable)",
      collect,
    )
    .option(
      "--reject <key>",
      "the run cheated: score it as tampered (a run key, or all; repeatable)",
      collect,
    )
    .option("--json", "print the suspicious runs as JSON")
    .action(async (runDir: string, options: ReviewOptions) => {
      const { decideRunDir, reviewRunDir } = await import("../../bench/review/index.js");
      const directory = resolve(io.cwd, runDir);
      if (options.accept !== undefined && options.reject !== undefined) {
        throw new UsageError("cli.review-both-decisions", "give --accept or --reject, not both");
      }
      const decision =
        options.accept !== undefined
          ? "accept"
          : options.reject !== undefined
            ? "reject"
            : undefined;
      const keys = options.accept ?? options.reject ?? [];
      const runs =
        decision === undefined
          ? await reviewRunDir(directory)
          : await decideRunDir(directory, keys.includes("all") ? "all" : keys, decision);
      if (options.json === true) {
        printJson(io, { runDir: directory, runs });
        return;
      }
      if (runs.length === 0) {
        printLines(io, [
          decision === undefined
            ? `no suspicious runs in ${directory}`
            : `nothing to ${decision}: no pending suspicious run`,
        ]);
        return;
      }
      const lines: string[] = [];
      for (const run of runs) {
        lines.push(
          `${run.key} [${run.status}${run.decidedAt === undefined ? "" : ` ${run.decidedAt}`}] score ${(100 * run.passRatio).toFixed(1)}%${run.holdsVerdict && run.status === "pending" ? ", holds the verdict of its skill" : ""}`,
        );
        for (const finding of run.findings) lines.push(`  ${finding}`);
      }
      printLines(io, lines);
    });
}
