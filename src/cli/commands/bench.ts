/**
 * `skillsmith bench ...`: suites of skills × requirements × verifiers, their validation, and
 * importers of public benchmark layouts. One file per subcommand (`bench-<name>.ts`); this one
 * puts them together in the order `--help` lists them.
 */
import type { Command } from "commander";
import type { CommandContext } from "../context.js";
import { registerCheck, registerCheckTasks } from "./bench-check.js";
import { registerGenerate } from "./bench-generate.js";
import { registerImport } from "./bench-import.js";
import { registerRegrade } from "./bench-regrade.js";
import { registerReport } from "./bench-report.js";
import { registerReview } from "./bench-review.js";
import { registerRun } from "./bench-run.js";
import { registerValidateSuite } from "./bench-validate.js";

// Where other commands imported the shared flag parsers from before the split.
export { parseRepoFlag, positiveInteger } from "./bench-options.js";

export function registerBench(program: Command, context: CommandContext): void {
  const bench = program
    .command("bench")
    .description("Evaluate whether a skill helps an agent: suites, imports, validation");
  registerImport(bench, context);
  registerValidateSuite(bench, context);
  registerCheck(bench, context);
  registerCheckTasks(bench, context);
  registerRun(bench, context);
  registerReport(bench, context);
  registerReview(bench, context);
  registerRegrade(bench, context);
  registerGenerate(bench, context);
}
