/** `skillsmith bench import swe-skills-bench | harbor`: a suite from a public benchmark layout. */
import { resolve } from "node:path";
import type { Command } from "commander";
import { type ImportResult, importHarbor, importSweSkillsBench } from "../../bench/index.js";
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
      ...(result.copied === undefined ? {} : { copied: result.copied }),
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
    if ((result.copied ?? []).length > 0) {
      printLines(io, [
        `${result.copied?.length} helper file${result.copied?.length === 1 ? "" : "s"} copied beside the verifiers that import them (${[...new Set((result.copied ?? []).map((helper) => helper.path))].join(", ")})`,
      ]);
    }
    if (result.out !== undefined) {
      printLines(io, [
        `next: skillsmith bench validate-suite ${result.out}`,
        `then: skillsmith bench check ${result.out}   (environments and verifiers on the untouched repositories)`,
      ]);
    }
  }
  if (result.skills === 0) {
    log(io, `error: nothing could be imported from the ${layout} input (see the problems above)`);
    context.exit(NOTHING_IMPORTED_EXIT);
  }
}

export function registerImport(bench: Command, context: CommandContext): void {
  const { io } = context;
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
}
