/**
 * The one-command evaluation (`skillsmith eval`): for a user with a skill and a repository only.
 * Generate requirements and verifiers (or reuse the suite of an earlier call), check the suite,
 * estimate the cost, run the paired evaluation, write the report and return the verdict with its
 * evidence. Everything lives in one work folder, so the same call again continues: the suite is
 * reused, stored runs are skipped (the runner keys every result), and only what is missing runs.
 *
 * It sits in the report layer because it writes the HTML report; the work is the bench layer's
 * (generateSuite, validateSuite, runSuite, reportRunDir).
 *
 * One file (over 400 lines) because it is one resumable sequence, suite → check → estimate → runs
 * → report → verdict, whose steps share the work folder's state; split, each part would need that
 * state passed in.
 */
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import {
  type AgentKind,
  type BenchReport,
  formatSuiteProblem,
  type GenerateSuiteResult,
  generateSuite,
  type loadSuite,
  overriddenConfigurationId,
  type Profile,
  RESULTS_FILE,
  ResultsStore,
  type RunProgress,
  type RunSuiteSummary,
  reportRunDir,
  runSuite,
  type SandboxKind,
  type SuiteProblem,
  validateSuite,
} from "../bench/index.js";
import { InputError } from "../core/errors.js";
import { pathExists, unlessMissing, writeFileAtomic } from "../core/fs.js";
import {
  createSandbox,
  SandboxUnavailableError,
  type SandboxV1,
  treeDigest,
  UnsafeSandbox,
} from "../env/index.js";
import {
  costOf,
  type ModelClient,
  type ModelPrice,
  parseModelSpec,
  priceFor,
  writeRedactedFile,
} from "../model/index.js";
import { describeShiftInterval, INEFFECTIVE_DEFINITION } from "../stats/index.js";
import { renderHtmlReport } from "./html.js";

export const EVALUATION_FORMAT = "skillsmith-eval/1";

/**
 * Token counts the estimate assumes when nothing was measured yet (recorded with the estimate).
 * Agent runs: a medium coding task of a CLI agent; generation calls: one requirement-engineer or
 * test-engineer answer. Once runs are stored, their measured mean cost replaces the assumption.
 */
export const ESTIMATE_DEFAULTS = {
  agentRun: { inputTokens: 150_000, cachedInputTokens: 0, outputTokens: 8_000 },
  generationCall: { inputTokens: 8_000, cachedInputTokens: 0, outputTokens: 3_000 },
  requirements: 10,
  maxRounds: 2,
} as const;

export interface EvaluateSkillOptions {
  /** The Agent Skills folder under evaluation. */
  readonly skill: string;
  /** A URL, folder or bundle path, and the commit to pin. */
  readonly repository: string;
  readonly commit: string;
  readonly agent: AgentKind;
  /** The agent's model spec (`anthropic:claude-haiku-4-5`). */
  readonly model: string;
  /** Everything of this evaluation: `eval.json`, `suite/`, `runs/<configuration>/`, reports. */
  readonly workDir: string;
  /** Use this suite instead of generating one (or reusing the work folder's). */
  readonly suite?: string;
  /** The model that writes requirements and verifiers; needed only when a suite is generated. */
  readonly generator?: ModelClient;
  /** Sandbox in which generated verifiers are validated on the untouched repository. */
  readonly generationSandbox?: SandboxV1;
  readonly requirements?: number;
  readonly minTests?: number;
  readonly maxRounds?: number;
  readonly repeats?: number;
  readonly concurrency?: number;
  /** Dollars for the whole evaluation, generation included; runs stop being scheduled at it. */
  readonly budgetUsd?: number;
  readonly sandbox?: SandboxV1 | SandboxKind;
  readonly cacheDir?: string;
  readonly modelEndpoint?: Parameters<typeof runSuite>[0]["modelEndpoint"];
  readonly agentEnv?: Readonly<Record<string, string>>;
  readonly prices?: Readonly<Record<string, ModelPrice>>;
  readonly harnessFor?: Parameters<typeof runSuite>[0]["harnessFor"];
  readonly commandLine?: readonly string[];
  readonly signal?: AbortSignal;
  /** Human progress lines (the CLI writes them to stderr). */
  readonly onLog?: (line: string) => void;
  readonly onProgress?: (progress: RunProgress) => void;
  /** Called with the estimate before anything is spent. */
  readonly onEstimate?: (estimate: CostEstimate) => void;
}

export interface CostEstimate {
  /** Dollars still to spend (generation when a suite must be written, plus the missing runs). */
  readonly totalUsd: number | null;
  readonly generation: { readonly calls: number; readonly usd: number | null } | null;
  readonly runs: {
    readonly missing: number;
    readonly stored: number;
    readonly usdPerRun: number | null;
    /** `measured`: mean of the stored runs; `assumed`: `ESTIMATE_DEFAULTS.agentRun` tokens. */
    readonly basis: "measured" | "assumed";
    readonly usd: number | null;
  };
  /** The budget is below the estimate: the run will stop early and the verdict may be missing. */
  readonly exceedsBudget: boolean;
  readonly assumptions: typeof ESTIMATE_DEFAULTS;
}

export interface SkillVerdict {
  readonly skill: string;
  readonly config: string;
  /** Golden / harmful / ineffective; null when nothing was measurable. */
  readonly class: Profile["class"];
  readonly classFdr: Profile["classFdr"];
  readonly delta: number | null;
  readonly p: number | null;
  readonly n: number;
  readonly without: number | null;
  readonly with: number | null;
  /** Why there is no verdict, or null. */
  readonly unscorable: string | null;
  /** The evidence, one line each: per-requirement outcomes, flags, weak verifiers, what was ruled out. */
  readonly evidence: readonly string[];
}

export interface EvaluateSkillResult {
  readonly format: typeof EVALUATION_FORMAT;
  readonly workDir: string;
  readonly suite: {
    readonly path: string;
    readonly source: "generated" | "reused" | "given";
    readonly requirements: number;
  };
  readonly check: {
    readonly valid: boolean;
    readonly problems: readonly SuiteProblem[];
    readonly weakVerifiers: readonly string[];
  };
  readonly estimate: CostEstimate;
  /** Generation in this call (absent when the suite was reused or given). */
  readonly generation?: Pick<
    GenerateSuiteResult,
    "requirements" | "weak" | "requirementFindings"
  > & {
    readonly costUsd: number;
  };
  /** Absent when the suite did not pass its check (nothing ran). */
  readonly run?: RunSuiteSummary;
  readonly costUsd: { readonly generation: number; readonly runs: number; readonly total: number };
  readonly report?: { readonly json: string; readonly html: string };
  readonly verdict?: SkillVerdict;
  /** Whether every planned run is stored (false after a budget stop or failures). */
  readonly complete: boolean;
}

interface EvaluationState {
  readonly format: typeof EVALUATION_FORMAT;
  readonly skill: { readonly path: string; readonly digest: string };
  readonly repository: string;
  readonly commit: string;
  readonly suite: { readonly path: string; readonly source: "generated" | "given" };
  readonly generationCostUsd: number;
}

async function readState(path: string): Promise<EvaluationState | undefined> {
  // No record yet: a new evaluation. One that is there but unreadable is an error naming it.
  const text = await unlessMissing(path, readFile(path, "utf8"));
  if (text === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new InputError("eval-state-damaged", "the evaluation record is not JSON", { file: path });
  }
  const state = value as Partial<EvaluationState> | null;
  if (state?.format !== EVALUATION_FORMAT || typeof state.skill?.digest !== "string") {
    throw new InputError(
      "eval-state-damaged",
      `not a ${EVALUATION_FORMAT} evaluation record (move it away or choose another --out)`,
      { file: path },
    );
  }
  return state as EvaluationState;
}

function priceOf(
  spec: string,
  prices: Readonly<Record<string, ModelPrice>>,
): ModelPrice | undefined {
  try {
    return priceFor(parseModelSpec(spec), prices);
  } catch {
    // The estimate only: a spec we cannot read has no known price (the estimate says "unknown");
    // the run itself reads the spec again and reports the mistake where it is used.
    return undefined;
  }
}

function requirementCount(suite: Awaited<ReturnType<typeof loadSuite>>): number {
  return suite.skills.reduce((total, skill) => total + skill.requirements.length, 0);
}

/** Where the evaluation stands before spending: what is stored, what is missing, what it costs. */
function estimateCost(parts: {
  readonly generationCalls: number | null;
  readonly generatorSpec: string | undefined;
  readonly plannedRuns: number;
  readonly stored: { readonly runs: number; readonly costUsd: number };
  readonly agentModel: string;
  readonly prices: Readonly<Record<string, ModelPrice>>;
  readonly budgetUsd: number | undefined;
  readonly spentUsd: number;
}): CostEstimate {
  const generatorPrice =
    parts.generatorSpec === undefined ? undefined : priceOf(parts.generatorSpec, parts.prices);
  const generation =
    parts.generationCalls === null
      ? null
      : {
          calls: parts.generationCalls,
          usd:
            generatorPrice === undefined
              ? null
              : parts.generationCalls * costOf(ESTIMATE_DEFAULTS.generationCall, generatorPrice),
        };
  const missing = Math.max(0, parts.plannedRuns - parts.stored.runs);
  const measured = parts.stored.runs > 0 && parts.stored.costUsd > 0;
  const agentPrice = priceOf(parts.agentModel, parts.prices);
  const usdPerRun = measured
    ? parts.stored.costUsd / parts.stored.runs
    : agentPrice === undefined
      ? null
      : costOf(ESTIMATE_DEFAULTS.agentRun, agentPrice);
  const runsUsd = usdPerRun === null ? null : missing * usdPerRun;
  const totalUsd =
    runsUsd === null || (generation !== null && generation.usd === null)
      ? null
      : runsUsd + (generation?.usd ?? 0);
  return {
    totalUsd,
    generation,
    runs: {
      missing,
      stored: parts.stored.runs,
      usdPerRun,
      basis: measured ? "measured" : "assumed",
      usd: runsUsd,
    },
    exceedsBudget:
      parts.budgetUsd !== undefined &&
      totalUsd !== null &&
      totalUsd + parts.spentUsd > parts.budgetUsd,
    assumptions: ESTIMATE_DEFAULTS,
  };
}

function storedRuns(runDir: string): { runs: number; costUsd: number } {
  if (!existsSync(join(runDir, RESULTS_FILE))) return { runs: 0, costUsd: 0 };
  const store = ResultsStore.openReadOnly(runDir);
  try {
    return { runs: store.results().length, costUsd: store.totalCostUsd() };
  } finally {
    store.close();
  }
}

function percent(value: number | null): string {
  return value === null ? "–" : `${(100 * value).toFixed(1)}%`;
}

function verdictOf(report: BenchReport, config: string): SkillVerdict | undefined {
  const profile = report.profiles.find((candidate) => candidate.config === config);
  if (profile === undefined) return undefined;
  const evidence: string[] = [];
  for (const requirement of profile.requirements) {
    const delta =
      requirement.delta === null ? "not measurable" : `Δ ${requirement.delta.toFixed(1)}`;
    const reason = requirement.measurement.measurable ? "" : ` (${requirement.measurement.reason})`;
    const flags = requirement.flags.length === 0 ? "" : ` [${requirement.flags.join(", ")}]`;
    evidence.push(
      `${requirement.id}: without ${percent(requirement.without)}, with ${percent(requirement.with)}, ${delta}${reason}${flags}${requirement.weakVerifier ? " (weak verifier)" : ""}`,
    );
  }
  if (profile.p !== null) {
    const bound = profile.pMethod?.method === "dp-bounds";
    evidence.push(
      `${bound ? "sign-flip test" : "exact sign-flip test"} over ${profile.n} requirement${profile.n === 1 ? "" : "s"}: p ${bound ? "≤" : "="} ${profile.p.toPrecision(3)}${bound ? " (an upper bound of the exact p)" : ""}`,
    );
    evidence.push(INEFFECTIVE_DEFINITION);
  }
  const detectable = profile.detectable;
  if (detectable !== null) {
    if (!detectable.anyEffectDetectable) {
      // 2^(1−m′) ≥ α: no size of effect on these requirements could have given a verdict.
      const needed = Math.floor(1 - Math.log2(detectable.alpha)) + 1;
      evidence.push(
        `${detectable.nonZero} non-zero delta${detectable.nonZero === 1 ? "" : "s"} of ${detectable.n}: the smallest attainable p is ${detectable.minimumP.toPrecision(3)} ≥ α = ${detectable.alpha}, so no effect could be detected; at least ${needed} requirements with a non-zero delta are needed`,
      );
    } else if (detectable.interval.lower !== null && detectable.interval.upper !== null) {
      evidence.push(
        `uniform effects outside [${detectable.interval.lower.toFixed(1)}, ${detectable.interval.upper.toFixed(1)}] points are ruled out (${describeShiftInterval(detectable.interval)})`,
      );
    }
  }
  if (profile.weakVerifiers.length > 0) {
    evidence.push(`weak verifiers (counted): ${profile.weakVerifiers.join(", ")}`);
  }
  if (profile.sensitivity.disagreements.length > 0) {
    evidence.push(
      `sensitivity analyses disagreeing: ${profile.sensitivity.disagreements.join(", ")}`,
    );
  }
  if (profile.activation_rate !== null) {
    evidence.push(`skill used in ${percent(profile.activation_rate)} of the assisted runs`);
  }
  for (const note of profile.notes) evidence.push(note);
  return {
    skill: profile.skill,
    config: profile.config,
    class: profile.class,
    classFdr: profile.classFdr,
    delta: profile.delta,
    p: profile.p,
    n: profile.n,
    without: profile.without,
    with: profile.with,
    unscorable: profile.unscorable,
    evidence,
  };
}

/**
 * Evaluate one skill on one repository with one agent and model, end to end; the same call again
 * continues where the last one stopped. See the module comment.
 */
export async function evaluateSkill(options: EvaluateSkillOptions): Promise<EvaluateSkillResult> {
  const workDir = resolve(options.workDir);
  const statePath = join(workDir, "eval.json");
  const skillPath = resolve(options.skill);
  if (!(await pathExists(join(skillPath, "SKILL.md")))) {
    throw new InputError("skill-missing", "no SKILL.md in the skill folder", { file: skillPath });
  }
  const skillDigest = await treeDigest(skillPath);
  const prices = options.prices ?? {};
  const previous = await readState(statePath);
  if (previous !== undefined) {
    const changed = [
      previous.skill.digest !== skillDigest ? "the skill's files" : undefined,
      previous.repository !== options.repository ? "the repository" : undefined,
      previous.commit !== options.commit ? "the commit" : undefined,
    ].filter((item) => item !== undefined);
    if (changed.length > 0) {
      throw new InputError(
        "eval-inputs-changed",
        `${workDir} holds an evaluation of other inputs (${changed.join(", ")} changed); choose another --out to evaluate these`,
        { file: statePath },
      );
    }
  }

  const suitePath = options.suite !== undefined ? resolve(options.suite) : join(workDir, "suite");
  const suiteSource: EvaluateSkillResult["suite"]["source"] =
    options.suite !== undefined
      ? "given"
      : (await pathExists(join(suitePath, "suite.yaml")))
        ? "reused"
        : "generated";
  let generationCostUsd = previous?.generationCostUsd ?? 0;

  // The configuration this evaluation runs, named after what runs (as `bench run --agent` does).
  const configId = overriddenConfigurationId(
    { agent: options.agent, model: options.model },
    { id: "eval", suiteConfigurations: 1 },
  );
  const runDir = join(workDir, "runs", configId);
  const repeats = options.repeats ?? 1;
  const stored = storedRuns(runDir);

  let generation: EvaluateSkillResult["generation"];
  let estimate: CostEstimate | undefined;
  // Both arms of every requirement, `repeats` times; generation only when the suite is written.
  const estimateFor = (
    generating: { readonly calls: number; readonly spec: string } | undefined,
    requirementsPlanned: number,
  ): CostEstimate =>
    estimateCost({
      generationCalls: generating?.calls ?? null,
      generatorSpec: generating?.spec,
      plannedRuns: requirementsPlanned * 2 * repeats,
      stored,
      agentModel: options.model,
      prices,
      budgetUsd: options.budgetUsd,
      spentUsd: generationCostUsd,
    });
  if (suiteSource === "generated") {
    if (options.generator === undefined) {
      throw new InputError(
        "eval-needs-generator",
        "no suite to reuse: a model to write requirements and verifiers is needed",
        { field: "generator model" },
      );
    }
    const count = options.requirements ?? ESTIMATE_DEFAULTS.requirements;
    const rounds = options.maxRounds ?? ESTIMATE_DEFAULTS.maxRounds;
    estimate = estimateFor(
      // One requirement-engineer call (plus one re-ask), then up to 1 + rounds per verifier.
      { calls: 2 + count * (1 + rounds), spec: specOf(options.generator) },
      count,
    );
    options.onEstimate?.(estimate);
    options.onLog?.(`generating requirements and verifiers into ${suitePath}`);
    const generated = await generateSuite({
      skill: skillPath,
      repository: options.repository,
      commit: options.commit,
      out: suitePath,
      model: options.generator,
      sandbox: options.generationSandbox ?? (await localOrUnsafe(options)),
      ...(options.requirements === undefined ? {} : { requirements: options.requirements }),
      ...(options.minTests === undefined ? {} : { minTests: options.minTests }),
      ...(options.maxRounds === undefined ? {} : { maxRounds: options.maxRounds }),
      ...(options.cacheDir === undefined ? {} : { cacheDir: options.cacheDir }),
      ...(options.onLog === undefined ? {} : { onLog: options.onLog }),
    });
    const spent = Object.values(generated.usage).reduce((total, role) => total + role.costUsd, 0);
    generationCostUsd += spent;
    generation = {
      requirements: generated.requirements,
      weak: generated.weak,
      requirementFindings: generated.requirementFindings,
      costUsd: spent,
    };
  }
  const state: EvaluationState = {
    format: EVALUATION_FORMAT,
    skill: { path: skillPath, digest: skillDigest },
    repository: options.repository,
    commit: options.commit,
    suite: { path: suitePath, source: suiteSource === "given" ? "given" : "generated" },
    generationCostUsd,
  };
  await writeFileAtomic(statePath, `${JSON.stringify(state, null, 2)}\n`);

  // The check: the whole suite validated, and the verifiers the generation found weak named.
  const validation = await validateSuite(suitePath);
  const suite = validation.suite;
  const weakVerifiers =
    suite?.skills.flatMap((skill) =>
      skill.requirements
        .filter((requirement) => requirement.verifier.source?.["weak"] === true)
        .map((requirement) => `${skill.id}/${requirement.id}`),
    ) ?? [];
  const check = { valid: validation.valid, problems: validation.problems, weakVerifiers };
  for (const problem of validation.problems) options.onLog?.(formatSuiteProblem(problem));
  const requirements = suite === undefined ? 0 : requirementCount(suite);
  if (estimate === undefined) {
    estimate = estimateFor(undefined, requirements);
    options.onEstimate?.(estimate);
  }
  const base = {
    format: EVALUATION_FORMAT,
    workDir,
    suite: { path: suitePath, source: suiteSource, requirements },
    check,
    estimate,
    ...(generation === undefined ? {} : { generation }),
  } as const;
  if (!validation.valid || suite === undefined) {
    return {
      ...base,
      costUsd: {
        generation: generationCostUsd,
        runs: stored.costUsd,
        total: generationCostUsd + stored.costUsd,
      },
      complete: false,
    };
  }

  options.onLog?.(`running ${configId} (${options.agent}, ${options.model}) into ${runDir}`);
  const runBudget =
    options.budgetUsd === undefined
      ? undefined
      : Math.max(0, options.budgetUsd - generationCostUsd);
  const run = await runSuite({
    suite,
    runDir,
    agentOverride: options.agent,
    modelOverride: options.model,
    repeats,
    ...(options.concurrency === undefined ? {} : { concurrency: options.concurrency }),
    ...(runBudget === undefined ? {} : { budgetUsd: runBudget }),
    ...(options.sandbox === undefined ? {} : { sandbox: options.sandbox }),
    ...(options.cacheDir === undefined ? {} : { cacheDir: options.cacheDir }),
    ...(options.modelEndpoint === undefined ? {} : { modelEndpoint: options.modelEndpoint }),
    ...(options.agentEnv === undefined ? {} : { agentEnv: options.agentEnv }),
    prices,
    ...(options.harnessFor === undefined ? {} : { harnessFor: options.harnessFor }),
    ...(options.commandLine === undefined ? {} : { commandLine: options.commandLine }),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
    ...(options.onProgress === undefined ? {} : { onProgress: options.onProgress }),
    ...(options.onLog === undefined ? {} : { onWarning: options.onLog }),
  });

  const report = await reportRunDir(runDir);
  const jsonPath = join(workDir, "report.json");
  const htmlPath = join(workDir, "report.html");
  // Through the redacting writer, as every store write: keys never reach a report file.
  await writeRedactedFile(jsonPath, `${JSON.stringify(report, null, 2)}\n`);
  await writeRedactedFile(htmlPath, renderHtmlReport(report, { source: runDir }));
  const verdict = verdictOf(report, configId);
  const runsCost = storedRuns(runDir).costUsd;
  return {
    ...base,
    run,
    costUsd: { generation: generationCostUsd, runs: runsCost, total: generationCostUsd + runsCost },
    report: { json: jsonPath, html: htmlPath },
    ...(verdict === undefined ? {} : { verdict }),
    complete: run.failed.length === 0 && !run.stoppedByBudget && !run.aborted,
  };
}

function specOf(model: ModelClient): string {
  const spec = model.spec;
  return spec.provider === "openai-compatible"
    ? `${spec.provider}:${spec.model}@${spec.baseUrl ?? ""}`
    : `${spec.provider}:${spec.model}`;
}

async function localOrUnsafe(options: EvaluateSkillOptions): Promise<SandboxV1> {
  if (typeof options.sandbox === "object") return options.sandbox;
  if (options.sandbox === "unsafe") return new UnsafeSandbox();
  try {
    return await createSandbox({ kind: "local" });
  } catch (error) {
    if (!(error instanceof SandboxUnavailableError)) throw error;
    options.onLog?.(
      `warning: bubblewrap is unavailable (${error.message}); verifiers are validated WITHOUT isolation`,
    );
    return new UnsafeSandbox();
  }
}
