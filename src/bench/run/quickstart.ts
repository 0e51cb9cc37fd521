/**
 * The embedded default evaluation: `examples/quickstart` (two skills on a small bundled
 * repository, ten requirements each) replayed from recorded patches, so the main job of
 * skillsmith runs offline with no model: about a minute and a half the first time (the
 * environment is prepared and every verifier checked on the untouched repository), seconds once
 * those are cached and the runs stored.
 */
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { harnessFacts, harnessNames } from "../../agents/registry.js";
import { packageRoot } from "../../core/paths.js";
import type { SandboxV1 } from "../../env/index.js";
import { reportRunDir } from "../analysis/load.js";
import { renderReportText } from "../analysis/render.js";
import type { BenchReport } from "../analysis/report.js";
import type { RunSuiteSummary } from "./options.js";
import { openSandbox } from "./prepare.js";
import type { RunProgress } from "./progress.js";
import { runSuite } from "./runner.js";

export interface QuickstartEvaluationOptions {
  readonly runDir: string;
  readonly onProgress?: (progress: RunProgress) => void;
  /** Notes for a person (the unsafe fallback warning among them). */
  readonly onWarning?: (message: string) => void;
  /**
   * Each phase as it starts (sandbox, environment and verifier check, runs, report), then the
   * run's own lines for the long preparation work, so nothing is silent.
   */
  readonly onLog?: (line: string) => void;
  /** Default: the number of CPUs, at least 2. */
  readonly concurrency?: number;
  /** Where bases and workspaces are cached (default: the user's skillsmith cache). */
  readonly cacheDir?: string;
  readonly signal?: AbortSignal;
}

export interface QuickstartEvaluation {
  readonly suite: string;
  readonly predictions: string;
  readonly runDir: string;
  readonly sandbox: SandboxV1["kind"];
  readonly summary: RunSuiteSummary;
  readonly report: BenchReport;
}

/** Folder of the bundled quickstart (suite, bundle, predictions). */
export function quickstartFolder(): string {
  return join(packageRoot(), "examples", "quickstart");
}

/**
 * Bubblewrap when it works here; otherwise the unsafe pass-through with a warning, which is
 * acceptable only because replayed patches and our own verifiers run no untrusted code.
 */
async function quickstartSandbox(onWarning?: (message: string) => void): Promise<SandboxV1> {
  try {
    return await openSandbox("local");
  } catch (error) {
    onWarning?.(
      `warning: bubblewrap is not usable here (${error instanceof Error ? error.message.split("\n")[0] : String(error)}); the quickstart runs its bundled verifiers without a sandbox`,
    );
    return openSandbox("unsafe");
  }
}

/** Run (or resume) the quickstart evaluation in `runDir` and return its report data. */
export async function runQuickstartEvaluation(
  options: QuickstartEvaluationOptions,
): Promise<QuickstartEvaluation> {
  const folder = quickstartFolder();
  const suite = join(folder, "suite");
  const predictions = join(folder, "predictions.jsonl");
  const log = options.onLog;
  log?.("[1/4] opening the sandbox (bubblewrap)");
  const sandbox = await quickstartSandbox(options.onWarning);
  try {
    let running = false;
    log?.(
      "[2/4] preparing the environment and checking every verifier on the untouched repository (cached after the first time)",
    );
    const summary = await runSuite({
      suite,
      runDir: options.runDir,
      predictions,
      sandbox,
      concurrency: options.concurrency ?? Math.max(2, availableParallelism()),
      commandLine: ["skillsmith", "quickstart"],
      ...(options.cacheDir === undefined ? {} : { cacheDir: options.cacheDir }),
      ...(options.signal === undefined ? {} : { signal: options.signal }),
      onProgress: (progress: RunProgress) => {
        // The first progress of the runs themselves marks the end of the preparation.
        if (!running) {
          running = true;
          log?.(
            `[3/4] running ${progress.total} paired runs (${progress.alreadyDone} already stored): each replays a recorded patch and runs the verifier`,
          );
        }
        options.onProgress?.(progress);
      },
      ...(options.onWarning === undefined ? {} : { onWarning: options.onWarning }),
      ...(log === undefined
        ? {}
        : {
            onLog: (line: string) => log(`  ${line}`),
          }),
    });
    log?.("[4/4] reading the results and computing the verdicts");
    const report = await reportRunDir(options.runDir);
    return { suite, predictions, runDir: summary.runDir, sandbox: sandbox.kind, summary, report };
  } finally {
    await sandbox.dispose?.();
  }
}

/**
 * The quickstart's text: what was evaluated (and that it replayed recorded patches), the verdict
 * table and views from `renderReportText`, and the one-line change that runs a real agent.
 */
export function renderQuickstartText(evaluation: QuickstartEvaluation): string[] {
  const { summary } = evaluation;
  return [
    `Evaluated ${evaluation.suite} by replaying the recorded patches in ${evaluation.predictions}`,
    `(no model, no network; ${summary.executed} runs now, ${summary.alreadyDone} already stored; sandbox: ${evaluation.sandbox}).`,
    "",
    ...renderReportText(evaluation.report),
    "",
    `Results: ${evaluation.runDir} (skillsmith bench report ${evaluation.runDir})`,
    ...realAgentLines(evaluation.suite),
  ];
}

/**
 * How to run a real agent instead, from the harness registry rather than from names known here:
 * the harnesses with a default model, then those that take a model but name none (a user's
 * registered harness shows up like the built-in ones).
 */
function realAgentLines(suite: string): string[] {
  const harnesses = harnessNames().map((name) => ({ name, facts: harnessFacts(name) }));
  const choices = [
    ...harnesses.flatMap(({ name, facts }) =>
      facts.defaultModel === undefined ? [] : [{ name, model: facts.defaultModel }],
    ),
    ...harnesses.flatMap(({ name, facts }) =>
      facts.defaultModel === undefined && facts.keyVariables !== undefined
        ? [{ name, model: "<provider:model>" }]
        : [],
    ),
  ];
  const [first, ...others] = choices;
  if (first === undefined) return [];
  return [
    "Run a real agent on the same suite instead of the recordings:",
    `  skillsmith bench run ${suite} --agent ${first.name} --model ${first.model} --out runs/quickstart-${first.name}`,
    ...(others.length === 0
      ? []
      : [
          `  (or ${others.map((other) => `--agent ${other.name} --model ${other.model}`).join(", or ")})`,
        ]),
  ];
}
