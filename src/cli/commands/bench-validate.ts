/** `skillsmith bench validate-suite`: every problem of a suite folder, without running anything. */
import { resolve } from "node:path";
import type { Command } from "commander";
import { formatSuiteProblem, readCheckLabels, validateSuite } from "../../bench/index.js";
import { defaultCacheDir } from "../../env/index.js";
import { type CommandContext, printJson, printLines } from "../context.js";
import { selectionOf, withSelectionOptions } from "./bench-options.js";

export function registerValidateSuite(bench: Command, context: CommandContext): void {
  const { io } = context;
  withSelectionOptions(
    bench
      .command("validate-suite")
      .description(
        "Check a suite folder completely — files, schemas, pinned commits — and print every problem (exit 1 on errors)",
      )
      .argument("<suite>", "the suite folder"),
    "check",
  )
    .option(
      "--no-commits",
      "do not check that pinned commits exist (reads local repositories and bundles)",
    )
    .option("--json", "print {valid, errors, warnings, problems} as JSON")
    .action(
      async (
        suitePath: string,
        options: { json?: boolean; skill?: string[]; requirement?: string[]; commits?: boolean },
      ) => {
        const root = resolve(io.cwd, suitePath);
        const validation = await validateSuite(root, {
          ...selectionOf(options),
          checkCommits: options.commits !== false,
          // What the last `bench check` measured, so a missing tool's row gives the measured label.
          checkLabels: await readCheckLabels(defaultCacheDir(io.env), root),
        });
        const errors = validation.problems.filter((problem) => problem.severity === "error").length;
        const warnings = validation.problems.length - errors;
        const suite = validation.suite ?? validation.runnable;
        const counts =
          suite === undefined
            ? {}
            : {
                skills: suite.skills.length,
                requirements: suite.skills.reduce(
                  (total, skill) => total + skill.requirements.length,
                  0,
                ),
                configurations: suite.configurations.map((configuration) => configuration.id),
              };
        if (options.json === true) {
          printJson(io, {
            valid: validation.valid,
            errors,
            warnings,
            problems: validation.problems,
            ...(validation.valid ? counts : {}),
            ...(validation.runnable !== undefined && !validation.valid
              ? { runnable: counts, excluded: validation.excluded }
              : {}),
          });
        } else {
          printLines(io, validation.problems.map(formatSuiteProblem));
          if (validation.suite !== undefined) {
            printLines(io, [
              `suite "${validation.suite.name}" is valid: ${counts.skills} skills, ${counts.requirements} requirements, ${validation.suite.configurations.length} configurations${warnings > 0 ? ` (${warnings} warnings)` : ""}`,
            ]);
          } else {
            printLines(io, [
              `${errors} error${errors === 1 ? "" : "s"}, ${warnings} warning${warnings === 1 ? "" : "s"}${
                validation.runnable === undefined
                  ? ": the suite cannot run until the errors are fixed"
                  : `: ${counts.requirements} requirement${counts.requirements === 1 ? "" : "s"} of ${counts.skills} skill${counts.skills === 1 ? "" : "s"} can run; bench check and bench run leave out (and report) the ${validation.excluded.length} part${validation.excluded.length === 1 ? "" : "s"} with errors`
              }`,
            ]);
          }
        }
        if (!validation.valid) context.exit(1);
      },
    );
}
