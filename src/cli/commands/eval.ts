import { basename, resolve } from "node:path";
import type { Command } from "commander";
import { AGENT_KINDS, createProgressRenderer, endpointFromEnvironment } from "../../bench/index.js";
import { definedFields } from "../../core/defined.js";
import { UsageError } from "../../core/errors.js";
import { defaultCacheDir } from "../../env/index.js";
import { loadModelConfig, ModelClient } from "../../model/index.js";
import {
  type CostEstimate,
  ESTIMATE_DEFAULTS,
  type EvaluateSkillResult,
  evaluateSkill,
} from "../../report/index.js";
import { type CommandContext, log, printJson, printLines } from "../context.js";
import {
  agentKindOf,
  budgetUsdOf,
  parseRepoFlag,
  positiveInteger,
  repositoryLocation,
  sandboxKindHelp,
  sandboxKindOf,
} from "./bench-options.js";

interface EvalOptions {
  repo?: string;
  agent: string;
  model: string;
  generatorModel?: string;
  suite?: string;
  out?: string;
  requirements?: number;
  minTests?: number;
  maxRounds?: number;
  repeats?: number;
  concurrency?: number;
  budgetUsd?: string;
  sandbox: string;
  json?: boolean;
}

function dollars(value: number | null): string {
  return value === null ? "unknown (no price for the model)" : `$${value.toFixed(4)}`;
}

/** What a per-run figure rests on, in words. */
const BASIS: Record<CostEstimate["runs"]["basis"], string> = {
  measured: "the mean of the stored runs",
  assumed: `assumed: ${ESTIMATE_DEFAULTS.agentRun.inputTokens / 1000}k input and ${ESTIMATE_DEFAULTS.agentRun.outputTokens / 1000}k output tokens at the model's price, until a run is measured`,
  "no-model": "the agent calls no model",
};

function estimateLine(estimate: CostEstimate, budgetUsd: number | undefined): string {
  const parts = [
    `estimated cost ${dollars(estimate.totalUsd)}`,
    ...(estimate.generation === null
      ? []
      : [`generation ≤ ${estimate.generation.calls} calls ${dollars(estimate.generation.usd)}`]),
    `${estimate.runs.missing} runs to do (${estimate.runs.stored} stored) at ${dollars(estimate.runs.usdPerRun)} each (${BASIS[estimate.runs.basis]})`,
  ];
  const budget =
    budgetUsd === undefined
      ? ""
      : estimate.exceedsBudget
        ? `; above the budget of $${budgetUsd}: runs stop there, run the same command with a larger --budget-usd to continue`
        : `; budget $${budgetUsd}`;
  return `${parts.join(", ")}${budget}`;
}

function verdictLines(result: EvaluateSkillResult): string[] {
  const lines: string[] = [];
  const verdict = result.verdict;
  const skill = verdict?.skill ?? "the skill";
  if (verdict === undefined || verdict.class === null) {
    lines.push(
      `no verdict for ${skill}: ${verdict?.unscorable ?? (result.check.valid ? "nothing was measurable" : "the suite did not pass its check")}`,
    );
  } else {
    const delta = verdict.delta === null ? "–" : verdict.delta.toFixed(1);
    lines.push(
      `verdict for ${skill} (${verdict.config}): ${verdict.class.toUpperCase()} (Δ = ${delta} points, p = ${verdict.p?.toPrecision(3) ?? "–"}, n = ${verdict.n}; under FDR control: ${verdict.classFdr ?? "–"})${result.complete ? "" : " — provisional"}`,
    );
  }
  const run = result.run;
  if (!result.complete && run !== undefined) {
    const stored = run.alreadyDone + run.executed + (run.unmeasured ?? 0);
    lines.push(
      `incomplete: ${stored} of ${run.total} runs stored — the verdict is provisional; run the same command again to continue`,
    );
  }
  for (const line of verdict?.evidence ?? []) lines.push(`  ${line}`);
  lines.push(
    `cost: $${result.costUsd.total.toFixed(4)} (generation $${result.costUsd.generation.toFixed(4)}, runs $${result.costUsd.runs.toFixed(4)})`,
  );
  if (result.report !== undefined) lines.push(`report: ${result.report.html}`);
  if (!result.complete) {
    lines.push("incomplete: run the same command again to continue (stored runs are kept)");
  }
  return lines;
}

export function registerEval(program: Command, context: CommandContext): void {
  const { io } = context;
  program
    .command("eval")
    .description(
      "Evaluate a skill on a repository in one command: generate (or reuse) requirements and verifiers, check them, run the paired evaluation, report the verdict; run again to continue",
    )
    .argument("<skill-dir>", "the Agent Skills folder under evaluation")
    .option(
      "--repo <url|path>@<commit>",
      "the repository and the commit to pin (default with --suite: the one the suite pins)",
    )
    .requiredOption("--agent <agent>", `the agent harness (${AGENT_KINDS.join(", ")})`)
    .requiredOption("--model <spec>", "the agent's model (e.g. anthropic:claude-haiku-4-5)")
    .option(
      "--generator-model <spec>",
      "model writing requirements and verifiers (default: --model)",
    )
    .option("--suite <dir>", "use this suite instead of generating one")
    .option("--out <dir>", "work folder (default ./skillsmith-eval/<skill folder name>)")
    .option(
      "--requirements <n>",
      "requirements to generate (default 10)",
      positiveInteger("--requirements"),
    )
    .option(
      "--min-tests <n>",
      "tests per verifier at least (default 8)",
      positiveInteger("--min-tests"),
    )
    .option("--max-rounds <n>", "regenerations of a weak verifier (default 2)", (value: string) => {
      const parsed = Number(value);
      if (!Number.isInteger(parsed) || parsed < 0) {
        throw new UsageError(
          "cli.option-invalid",
          `--max-rounds expects an integer ≥ 0 (got "${value}")`,
        );
      }
      return parsed;
    })
    .option(
      "--repeats <n>",
      "runs per requirement and arm (default 1)",
      positiveInteger("--repeats"),
    )
    .option("--concurrency <n>", "runs at once", positiveInteger("--concurrency"))
    .option("--budget-usd <dollars>", "stop scheduling runs once the evaluation cost this much")
    .option("--sandbox <kind>", sandboxKindHelp(), "local")
    .option("--json", "print the evaluation result as JSON (progress stays on stderr)")
    .action(async (skillDir: string, options: EvalOptions) => {
      if (options.repo === undefined && options.suite === undefined) {
        throw new UsageError(
          "cli.option-missing",
          "--repo <url|path>@<commit> is required unless --suite gives a suite that pins the repository",
        );
      }
      const pinned = options.repo === undefined ? undefined : parseRepoFlag(options.repo);
      const agent = agentKindOf(options.agent);
      const sandbox = sandboxKindOf(options);
      const budgetUsd = budgetUsdOf(options.budgetUsd);
      const skill = resolve(io.cwd, skillDir);
      const workDir =
        options.out === undefined
          ? resolve(io.cwd, "skillsmith-eval", basename(skill))
          : resolve(io.cwd, options.out);
      const progress = createProgressRenderer(
        io.stderr,
        io.stderrIsTerminal === true && options.json !== true,
      );
      const say = (line: string) => {
        progress.finish();
        log(io, line);
      };
      say(`work folder: ${workDir}`);
      let result: EvaluateSkillResult;
      try {
        result = await evaluateSkill({
          skill,
          ...(pinned === undefined
            ? {}
            : { repository: repositoryLocation(pinned.repository, io.cwd), commit: pinned.commit }),
          agent,
          model: options.model,
          workDir,
          ...(options.suite === undefined ? {} : { suite: resolve(io.cwd, options.suite) }),
          // A given suite needs no generator (nor its key).
          ...(options.suite === undefined
            ? {
                generator: new ModelClient({
                  spec: options.generatorModel ?? options.model,
                  env: io.env,
                  cwd: io.cwd,
                }),
              }
            : {}),
          ...definedFields({
            requirements: options.requirements,
            minTests: options.minTests,
            maxRounds: options.maxRounds,
            repeats: options.repeats,
            concurrency: options.concurrency,
            budgetUsd,
          }),
          sandbox,
          cacheDir: defaultCacheDir(io.env),
          modelEndpoint: endpointFromEnvironment(io.env),
          prices: loadModelConfig({ cwd: io.cwd, env: io.env }).config.prices ?? {},
          commandLine: [
            "skillsmith",
            "eval",
            skillDir,
            ...(options.repo === undefined ? [] : ["--repo", options.repo]),
            ...(options.suite === undefined ? [] : ["--suite", options.suite]),
            "--agent",
            options.agent,
            "--model",
            options.model,
          ],
          onLog: say,
          onProgress: progress.update,
          onEstimate: (estimate) => say(estimateLine(estimate, budgetUsd)),
        });
      } finally {
        progress.finish();
      }
      if (options.json === true) printJson(io, result);
      else printLines(io, verdictLines(result));
      if (!result.check.valid || result.verdict?.class == null || !result.complete) context.exit(1);
    });
}
