import { resolve } from "node:path";
import type { Command } from "commander";
import type { ImportResult } from "../../bench/index.js";
import {
  formatSuiteProblem,
  importHarbor,
  importSweSkillsBench,
  validateSuite,
} from "../../bench/index.js";
import { type CliIo, type CommandContext, log, printJson, printLines } from "../context.js";

/** Exit code when an import produced nothing (a usage or input problem, as documented). */
const NOTHING_IMPORTED_EXIT = 2;

function report(
  result: ImportResult,
  json: boolean,
  layout: string,
  io: CliIo,
  context: CommandContext,
): void {
  for (const note of result.notes) log(io, `note: ${note}`);
  if (json) {
    printJson(io, {
      skills: result.skills,
      requirements: result.requirements,
      problems: result.problems.map(({ path, message }) => ({ path, message })),
    });
  } else {
    if (result.out !== undefined) {
      printLines(io, [
        `imported ${result.skills} skill${result.skills === 1 ? "" : "s"} and ${result.requirements} requirement${result.requirements === 1 ? "" : "s"} into ${result.out}`,
      ]);
    }
    if (result.problems.length > 0) {
      printLines(io, [
        `${result.problems.length} problem${result.problems.length === 1 ? "" : "s"} (not imported, or imported incompletely):`,
        ...result.problems.map((problem) => `  ${problem.path}: ${problem.message}`),
      ]);
    }
    if (result.out !== undefined) {
      printLines(io, [`next: skillsmith bench validate-suite ${result.out}`]);
    }
  }
  if (result.skills === 0) {
    log(io, `error: nothing could be imported from the ${layout} input (see the problems above)`);
    context.exit(NOTHING_IMPORTED_EXIT);
  }
}

/**
 * `skillsmith bench ...`: suites of skills × requirements × verifiers, their validation, and
 * importers of public benchmark layouts.
 */
export function registerBench(program: Command, context: CommandContext): void {
  const { io } = context;
  const bench = program
    .command("bench")
    .description("Evaluate whether a skill helps an agent: suites, imports, validation");

  const importCommand = bench
    .command("import")
    .description("Create a suite from a public benchmark layout");

  importCommand
    .command("swe-skills-bench")
    .description(
      "Import the SWE-Skills-Bench layout (config/benchmark_config.yaml, skills/, tasks/batchN/, tests/batchN/)",
    )
    .argument("<dir>", "the benchmark folder")
    .requiredOption("--out <suite>", "suite folder to create (must not exist or be empty)")
    .option(
      "--repo-root <dir>",
      "folder holding local clones, <dir>/<repo-name>, used instead of remote URLs when present",
    )
    .option("--json", "print {skills, requirements, problems} as JSON")
    .action(
      async (directory: string, options: { out: string; repoRoot?: string; json?: boolean }) => {
        const result = await importSweSkillsBench(resolve(io.cwd, directory), {
          out: resolve(io.cwd, options.out),
          ...(options.repoRoot === undefined
            ? {}
            : { repoRoot: resolve(io.cwd, options.repoRoot) }),
        });
        report(result, options.json === true, "SWE-Skills-Bench", io, context);
      },
    );

  importCommand
    .command("harbor")
    .description(
      "Import Harbor / Terminal-Bench / SkillsBench task folders (instruction.md, task.toml, environment/, tests/, solution/)",
    )
    .argument("<task-dir...>", "task folders, or folders of task folders")
    .requiredOption("--out <suite>", "suite folder to create (must not exist or be empty)")
    .option("--skill <dir>", "Agent Skills folder for tasks that ship no skills of their own")
    .option("--json", "print {skills, requirements, problems} as JSON")
    .action(
      async (directories: string[], options: { out: string; skill?: string; json?: boolean }) => {
        const result = await importHarbor(
          directories.map((directory) => resolve(io.cwd, directory)),
          {
            out: resolve(io.cwd, options.out),
            ...(options.skill === undefined ? {} : { skill: resolve(io.cwd, options.skill) }),
          },
        );
        report(result, options.json === true, "Harbor", io, context);
      },
    );

  bench
    .command("validate-suite")
    .alias("check")
    .description("Check a suite folder completely and print every problem (exit 1 on errors)")
    .argument("<suite>", "the suite folder")
    .option("--json", "print {valid, errors, warnings, problems} as JSON")
    .action(async (suitePath: string, options: { json?: boolean }) => {
      const validation = await validateSuite(resolve(io.cwd, suitePath));
      const errors = validation.problems.filter((problem) => problem.severity === "error").length;
      const warnings = validation.problems.length - errors;
      const suite = validation.suite;
      if (options.json === true) {
        printJson(io, {
          valid: validation.valid,
          errors,
          warnings,
          problems: validation.problems,
          ...(suite === undefined
            ? {}
            : {
                skills: suite.skills.length,
                requirements: suite.skills.reduce(
                  (total, skill) => total + skill.requirements.length,
                  0,
                ),
                configurations: suite.configurations.map((configuration) => configuration.id),
              }),
        });
      } else {
        printLines(io, validation.problems.map(formatSuiteProblem));
        if (suite !== undefined) {
          const requirements = suite.skills.reduce(
            (total, skill) => total + skill.requirements.length,
            0,
          );
          printLines(io, [
            `suite "${suite.name}" is valid: ${suite.skills.length} skills, ${requirements} requirements, ${suite.configurations.length} configurations${warnings > 0 ? ` (${warnings} warnings)` : ""}`,
          ]);
        } else {
          printLines(io, [
            `${errors} error${errors === 1 ? "" : "s"}, ${warnings} warning${warnings === 1 ? "" : "s"}: the suite cannot run until the errors are fixed`,
          ]);
        }
      }
      if (!validation.valid) context.exit(1);
    });
}
