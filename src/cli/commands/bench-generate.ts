/**
 * `skillsmith bench generate`: a suite written by a model from a skill and a repository, its
 * verifiers checked on the untouched repository.
 */
import { resolve } from "node:path";
import type { Command } from "commander";
import { generateSuite } from "../../bench/generate/index.js";
import { formatSuiteProblem } from "../../bench/index.js";
import { UsageError } from "../../core/errors.js";
import {
  createSandbox,
  defaultCacheDir,
  SandboxUnavailableError,
  UnsafeSandbox,
} from "../../env/index.js";
import { ModelClient } from "../../model/index.js";
import { type CommandContext, log, printJson, printLines } from "../context.js";
import { parseRepoFlag, positiveInteger, repositoryLocation } from "./bench-options.js";

interface GenerateOptions {
  skill: string;
  repo: string;
  out: string;
  model: string;
  requirements?: number;
  minTests?: number;
  maxRounds?: string;
  json?: boolean;
}

export function registerGenerate(bench: Command, context: CommandContext): void {
  const { io } = context;
  bench
    .command("generate")
    .description(
      "Write a suite from a skill and a repository: model-written requirements and verifiers, checked on the untouched repository",
    )
    .requiredOption("--skill <dir>", "the Agent Skills folder under evaluation")
    .requiredOption("--repo <url|path>@<commit>", "the repository and the commit to pin")
    .requiredOption("--out <suite>", "suite folder to create (must not exist or be empty)")
    .requiredOption("--model <spec>", "model for both roles (e.g. anthropic:claude-sonnet-4-5)")
    .option(
      "--requirements <n>",
      "requirements to write (default 10)",
      positiveInteger("--requirements"),
    )
    .option(
      "--min-tests <n>",
      "tests per verifier at least (default 8)",
      positiveInteger("--min-tests"),
    )
    .option("--max-rounds <n>", "regenerations of a weak verifier (default 2)")
    .option("--json", "print the generation summary as JSON")
    .action(async (options: GenerateOptions) => {
      const { repository, commit } = parseRepoFlag(options.repo);
      let maxRounds: number | undefined;
      if (options.maxRounds !== undefined) {
        maxRounds = Number(options.maxRounds);
        if (!Number.isInteger(maxRounds) || maxRounds < 0) {
          throw new UsageError(
            "cli.option-invalid",
            `--max-rounds expects an integer ≥ 0 (got "${options.maxRounds}")`,
          );
        }
      }
      const model = new ModelClient({ spec: options.model, env: io.env, cwd: io.cwd });
      let sandbox: Awaited<ReturnType<typeof createSandbox>>;
      try {
        sandbox = await createSandbox({ kind: "local" });
      } catch (error) {
        if (!(error instanceof SandboxUnavailableError)) throw error;
        log(
          io,
          `warning: bubblewrap is unavailable (${error.message}); verifiers are validated WITHOUT isolation`,
        );
        sandbox = new UnsafeSandbox();
      }
      const result = await generateSuite({
        skill: resolve(io.cwd, options.skill),
        repository: repositoryLocation(repository, io.cwd),
        commit,
        out: resolve(io.cwd, options.out),
        model,
        sandbox,
        cacheDir: defaultCacheDir(io.env),
        ...(options.requirements === undefined ? {} : { requirements: options.requirements }),
        ...(options.minTests === undefined ? {} : { minTests: options.minTests }),
        ...(maxRounds === undefined ? {} : { maxRounds }),
        onLog: (line) => log(io, line),
      });
      if (options.json === true) {
        printJson(io, result);
      } else {
        const lines = [
          `wrote ${result.out}: ${result.requirements} requirements, ${result.verifiers.length} verifiers, ${result.weak} weak, requirement rounds ${result.requirementRounds}`,
          ...result.requirementFindings.map((finding) => `  requirement finding: ${finding}`),
          ...result.verifiers.map(
            (verifier) =>
              `  ${verifier.requirement}: ${verifier.tests} tests, ${verifier.rounds} round${verifier.rounds === 1 ? "" : "s"}${verifier.weak ? `, WEAK: ${verifier.findings.join("; ")}` : ""}`,
          ),
          ...Object.entries(result.usage).map(
            ([role, totals]) =>
              `  ${role}: ${totals.inputTokens} input + ${totals.outputTokens} output tokens, $${totals.costUsd.toFixed(4)}`,
          ),
          ...result.suiteProblems.map(formatSuiteProblem),
          result.valid
            ? `suite is valid; next: skillsmith bench run ${options.out}`
            : "the written suite does not validate (see the problems above)",
        ];
        printLines(io, lines);
      }
      if (!result.valid || result.weak > 0) context.exit(1);
    });
}
