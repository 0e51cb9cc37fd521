/** `skillsmith bench import swe-skills-bench | harbor`: a suite from a public benchmark layout. */
import { resolve } from "node:path";
import type { Command } from "commander";
import {
  DISTRACTOR_ARM,
  type ImportResult,
  importHarbor,
  importSweSkillsBench,
} from "../../bench/index.js";
import { UsageError } from "../../core/errors.js";
import { type CliIo, type CommandContext, log, printJson, printLines } from "../context.js";
import { collect } from "./bench-options.js";

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
      printLines(
        io,
        result.next !== undefined
          ? [...result.next]
          : [
              `next: skillsmith bench validate-suite ${result.out}`,
              `then: skillsmith bench check ${result.out}   (environments and verifiers on the untouched repositories)`,
            ],
      );
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
    .option(
      "--study",
      "add the paper's four agent–model configurations and its protocol (one run per arm, timeouts scored zero, α 0.05)",
    )
    .option("--json", "print {skills, requirements, problems} as JSON")
    .action(
      async (
        directory: string,
        options: { out: string; repoRoot?: string; study?: boolean; json?: boolean },
      ) => {
        const result = await importSweSkillsBench(resolve(io.cwd, directory), {
          out: resolve(io.cwd, options.out),
          ...(options.study === true ? { study: true } : {}),
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
    .option(
      "--skill <dir>",
      "Agent Skills folder installed in the with-skill arm of tasks that ship no skills of their own (repeatable: one arm of several skills)",
      collect,
    )
    .option(
      "--variant <name=dir,dir>",
      "a further arm: these skill folders installed together (repeatable)",
      collect,
    )
    .option(
      "--distractor <dir>",
      `a skill that should not help, installed in every arm with skills, and alone as the "${DISTRACTOR_ARM}" arm (repeatable)`,
      collect,
    )
    .option("--json", "print {skills, requirements, problems} as JSON")
    .action(
      async (
        directories: string[],
        options: {
          out: string;
          skill?: string[];
          variant?: string[];
          distractor?: string[];
          json?: boolean;
        },
      ) => {
        const absolute = (path: string) => resolve(io.cwd, path);
        const result = await importHarbor(directories.map(absolute), {
          out: absolute(options.out),
          skills: (options.skill ?? []).map(absolute),
          variants: parseVariants(options.variant ?? [], absolute),
          distractors: (options.distractor ?? []).map(absolute),
        });
        report(result, options.json === true, "Harbor", io, context);
      },
    );
}

/** `--variant name=dirA,dirB` (repeatable; a name given twice adds its folders). */
export function parseVariants(
  values: readonly string[],
  absolute: (path: string) => string,
): Record<string, string[]> {
  const variants: Record<string, string[]> = {};
  for (const value of values) {
    const match = /^([A-Za-z0-9][A-Za-z0-9._-]{0,63})=(.+)$/.exec(value);
    const folders = (match?.[2] ?? "")
      .split(",")
      .map((folder) => folder.trim())
      .filter((folder) => folder !== "");
    if (match === null || folders.length === 0) {
      throw new UsageError(
        "bench.variant-invalid",
        `--variant ${value}: expected name=folder[,folder...] (a name of letters, digits, ".", "_" or "-")`,
      );
    }
    const name = match[1] as string;
    if (["with", "without", "none", "skill"].includes(name)) {
      throw new UsageError(
        "bench.variant-invalid",
        `--variant ${value}: with, without, none and skill name the fixed arms; choose another name`,
      );
    }
    variants[name] = [...(variants[name] ?? []), ...folders.map(absolute)];
  }
  return variants;
}
