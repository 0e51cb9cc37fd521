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
import { readFile, realpath } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import { z } from "zod";
import { harnessFacts } from "../agents/index.js";
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
  type Suite,
  type SuiteProblem,
  type SuiteSkill,
  validateSuite,
} from "../bench/index.js";
import { definedFields } from "../core/defined.js";
import { InputError } from "../core/errors.js";
import { formatTag } from "../core/format-tag.js";
import { formatTagSchema } from "../core/format-tag-schema.js";
import { pathExists, unlessMissing, writeFileAtomic } from "../core/fs.js";
import { fieldPrefix, parseJsonResult } from "../core/parse.js";
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
  providerNames,
  writeRedactedFile,
} from "../model/index.js";
import { parseSkillMarkdown } from "../skill/index.js";
import { describeShiftInterval, INEFFECTIVE_DEFINITION } from "../stats/index.js";
import { renderHtmlReport } from "./html.js";

export const EVALUATION_FORMAT = formatTag("eval", 1);

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
  /**
   * A URL, folder or bundle path, and the commit to pin. Optional with a given `suite` that pins
   * its skill's repository (then the suite's is used).
   */
  readonly repository?: string;
  readonly commit?: string;
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
    /**
     * `measured`: mean of the stored runs; `assumed`: `ESTIMATE_DEFAULTS.agentRun` tokens at the
     * model's price; `no-model`: the harness calls no model (replay, oracle), so runs cost nothing.
     */
    readonly basis: "measured" | "assumed" | "no-model";
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

/** The evaluation record (`evaluation.json` in the work folder), read back through this schema. */
const evaluationStateSchema = z.object({
  format: formatTagSchema(EVALUATION_FORMAT),
  skill: z.object({ path: z.string(), digest: z.string() }),
  repository: z.string(),
  commit: z.string(),
  suite: z.object({ path: z.string(), source: z.enum(["generated", "given"]) }),
  generationCostUsd: z.number().nonnegative(),
});

type EvaluationState = z.output<typeof evaluationStateSchema>;

async function readState(path: string): Promise<EvaluationState | undefined> {
  // No record yet: a new evaluation. One that is there but unreadable is an error naming it.
  const text = await unlessMissing(path, readFile(path, "utf8"));
  if (text === undefined) return undefined;
  const parsed = parseJsonResult(evaluationStateSchema, text);
  if (parsed.ok) return parsed.value;
  throw new InputError(
    "report.eval-state-damaged",
    `not a ${EVALUATION_FORMAT} evaluation record: ${fieldPrefix(parsed.error)}${parsed.error.message} (move it away or choose another --out)`,
    {
      file: path,
      ...(parsed.error.field === undefined ? {} : { field: parsed.error.field }),
    },
  );
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

/**
 * The price of an agent run's tokens, found as the run prices them (`bench/run/execute.ts`): a
 * spec naming no provider takes the harness's pricing provider. "no model" for a harness that
 * talks to no model endpoint.
 */
function agentPriceOf(
  agent: AgentKind,
  spec: string,
  prices: Readonly<Record<string, ModelPrice>>,
): ModelPrice | "no model" | undefined {
  const facts = harnessFacts(agent);
  if (facts.keyVariables === undefined && facts.pricingProvider === undefined) return "no model";
  const named = spec.slice(0, Math.max(0, spec.indexOf(":")));
  const withProvider =
    (providerNames as readonly string[]).includes(named) || facts.pricingProvider === undefined
      ? spec
      : `${facts.pricingProvider}:${spec}`;
  return priceOf(withProvider, prices);
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
  readonly agent: AgentKind;
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
  const agentPrice = agentPriceOf(parts.agent, parts.agentModel, parts.prices);
  const usdPerRun = measured
    ? parts.stored.costUsd / parts.stored.runs
    : agentPrice === "no model"
      ? 0
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
      basis: measured ? "measured" : agentPrice === "no model" ? "no-model" : "assumed",
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

function verdictOf(report: BenchReport, config: string, skill: string): SkillVerdict | undefined {
  const profile = report.profiles.find(
    (candidate) => candidate.config === config && candidate.skill === skill,
  );
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

/** The suite's skill this evaluation runs: the one given, in place of the suite's own folders. */
interface SelectedSkill {
  readonly suite: Suite;
  readonly skill: SuiteSkill;
}

/**
 * The part of a given suite that evaluates the given skill: the suite skill whose folder it is,
 * else the one named like it (its SKILL.md name or folder name), else a suite's only skill. The
 * given folder replaces the suite's skill folders, so the skill on the command line is the one
 * evaluated, on that skill's requirements only. A suite of several other skills is refused.
 */
export async function selectSuiteSkill(suite: Suite, skillPath: string): Promise<SelectedSkill> {
  const real = await realpath(skillPath);
  const folders = await Promise.all(
    suite.skills.map(async (skill) =>
      Promise.all(skill.skillFolders.map((folder) => realpath(folder).catch(() => folder))),
    ),
  );
  const file = join(skillPath, "SKILL.md");
  const declared = parseSkillMarkdown(await readFile(file, "utf8"), file).frontmatter?.["name"];
  const names = new Set([basename(skillPath), ...(typeof declared === "string" ? [declared] : [])]);
  const match =
    suite.skills.find((_, index) => folders[index]?.includes(real) === true) ??
    suite.skills.find((skill) => names.has(skill.id)) ??
    (suite.skills.length === 1 ? suite.skills[0] : undefined);
  if (match === undefined) {
    throw new InputError(
      "report.eval-skill-not-in-suite",
      `the suite has no skill ${[...names].map((name) => `"${name}"`).join(" or ")} (its skills: ${suite.skills.map((skill) => skill.id).join(", ")}); pass one of their folders or a suite of this skill`,
      { file: join(suite.root, "suite.yaml") },
    );
  }
  const skill: SuiteSkill = { ...match, skillFolders: [skillPath] };
  return { suite: { ...suite, skills: [skill] }, skill };
}

/** The repository of an evaluation, as recorded: the one given, else the one the suite pins. */
function repositoryOf(
  options: EvaluateSkillOptions,
  pinned: SuiteSkill["repository"],
  suiteFile: string,
): { readonly repository: string; readonly commit: string } {
  if (options.repository !== undefined && options.commit !== undefined) {
    if (pinned !== undefined && !pinned.commit.startsWith(options.commit)) {
      throw new InputError(
        "report.eval-repository-conflict",
        `--repo asks for commit ${options.commit}, the suite pins ${pinned.commit}; drop --repo to use the suite's`,
        { file: suiteFile },
      );
    }
    return { repository: options.repository, commit: options.commit };
  }
  if (pinned === undefined) {
    throw new InputError(
      "report.eval-repository-missing",
      "the suite's skill pins no repository: pass --repo <url|path>@<commit>",
      { file: suiteFile },
    );
  }
  const source = pinned.source;
  return {
    repository: source.kind === "url" ? source.url : source.path,
    commit: pinned.commit,
  };
}

/** Refuse a work folder that holds an evaluation of other inputs. */
function refuseChangedInputs(
  previous: EvaluationState | undefined,
  current: Pick<EvaluationState, "repository" | "commit"> & { readonly digest: string },
  statePath: string,
): void {
  if (previous === undefined) return;
  const changed = [
    previous.skill.digest !== current.digest ? "the skill's files" : undefined,
    previous.repository !== current.repository ? "the repository" : undefined,
    previous.commit !== current.commit ? "the commit" : undefined,
  ].filter((item) => item !== undefined);
  if (changed.length > 0) {
    throw new InputError(
      "report.eval-inputs-changed",
      `${dirname(statePath)} holds an evaluation of other inputs (${changed.join(", ")} changed); choose another --out to evaluate these`,
      { file: statePath },
    );
  }
}

/** The suite of the evaluation: given, reused from the work folder, or generated now. */
async function suiteOf(
  options: EvaluateSkillOptions,
  workDir: string,
): Promise<{ path: string; source: EvaluateSkillResult["suite"]["source"] }> {
  if (options.suite !== undefined) return { path: resolve(options.suite), source: "given" };
  const path = join(workDir, "suite");
  return {
    path,
    source: (await pathExists(join(path, "suite.yaml"))) ? "reused" : "generated",
  };
}

/** Generate the suite (requirements and verifiers) into `suitePath`, after the estimate. */
async function generateInto(
  options: EvaluateSkillOptions,
  target: { readonly skillPath: string; readonly suitePath: string },
  inputs: { readonly repository: string; readonly commit: string },
  estimateFor: EstimateFor,
): Promise<{ estimate: CostEstimate; generation: NonNullable<EvaluateSkillResult["generation"]> }> {
  if (options.generator === undefined) {
    throw new InputError(
      "report.eval-needs-generator",
      "no suite to reuse: a model to write requirements and verifiers is needed",
      { field: "generator model" },
    );
  }
  const count = options.requirements ?? ESTIMATE_DEFAULTS.requirements;
  const rounds = options.maxRounds ?? ESTIMATE_DEFAULTS.maxRounds;
  const estimate = estimateFor(
    // One requirement-engineer call (plus one re-ask), then up to 1 + rounds per verifier.
    { calls: 2 + count * (1 + rounds), spec: specOf(options.generator) },
    count * 2,
  );
  options.onEstimate?.(estimate);
  options.onLog?.(`generating requirements and verifiers into ${target.suitePath}`);
  const generated = await generateSuite({
    skill: target.skillPath,
    repository: inputs.repository,
    commit: inputs.commit,
    out: target.suitePath,
    model: options.generator,
    sandbox: options.generationSandbox ?? (await localOrUnsafe(options)),
    ...definedFields({
      requirements: options.requirements,
      minTests: options.minTests,
      maxRounds: options.maxRounds,
      cacheDir: options.cacheDir,
      onLog: options.onLog,
    }),
  });
  const spent = Object.values(generated.usage).reduce((total, role) => total + role.costUsd, 0);
  return {
    estimate,
    generation: {
      requirements: generated.requirements,
      weak: generated.weak,
      requirementFindings: generated.requirementFindings,
      costUsd: spent,
    },
  };
}

type EstimateFor = (
  generating: { readonly calls: number; readonly spec: string } | undefined,
  plannedRuns: number,
) => CostEstimate;

/** The check: the whole suite validated, and the verifiers the generation found weak named. */
async function checkSuite(
  suitePath: string,
  onLog: ((line: string) => void) | undefined,
): Promise<{ check: EvaluateSkillResult["check"]; suite: Suite | undefined }> {
  const validation = await validateSuite(suitePath);
  const suite = validation.suite;
  const weakVerifiers =
    suite?.skills.flatMap((skill) =>
      skill.requirements
        .filter((requirement) => requirement.verifier.source?.["weak"] === true)
        .map((requirement) => `${skill.id}/${requirement.id}`),
    ) ?? [];
  for (const problem of validation.problems) onLog?.(formatSuiteProblem(problem));
  return {
    check: { valid: validation.valid, problems: validation.problems, weakVerifiers },
    suite,
  };
}

/** Runs a suite plans for its skills: both arms and every variant, `repeats` times. */
function plannedRunsOf(suite: Suite, repeats: number): number {
  return suite.skills.reduce(
    (total, skill) =>
      total + skill.requirements.length * (2 + Object.keys(skill.variants ?? {}).length) * repeats,
    0,
  );
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
    throw new InputError("report.skill-missing", "no SKILL.md in the skill folder", {
      file: skillPath,
    });
  }
  const skillDigest = await treeDigest(skillPath);
  const previous = await readState(statePath);
  const suiteAt = await suiteOf(options, workDir);
  // A given suite is checked first: it names the skill to run and may pin the repository.
  let given =
    suiteAt.source === "given" ? await checkSuite(suiteAt.path, options.onLog) : undefined;
  const selected =
    given?.suite === undefined ? undefined : await selectSuiteSkill(given.suite, skillPath);
  const inputs = repositoryOf(
    options,
    selected?.skill.repository,
    join(suiteAt.path, "suite.yaml"),
  );
  refuseChangedInputs(previous, { ...inputs, digest: skillDigest }, statePath);
  let generationCostUsd = previous?.generationCostUsd ?? 0;

  // The configuration this evaluation runs, named after what runs (as `bench run --agent` does).
  const configId = overriddenConfigurationId(
    { agent: options.agent, model: options.model },
    { id: "eval", suiteConfigurations: 1 },
  );
  const runDir = join(workDir, "runs", configId);
  const repeats = options.repeats ?? 1;
  const stored = storedRuns(runDir);
  const estimateFor: EstimateFor = (generating, plannedRuns) =>
    estimateCost({
      generationCalls: generating?.calls ?? null,
      generatorSpec: generating?.spec,
      plannedRuns: plannedRuns * repeats,
      stored,
      agent: options.agent,
      agentModel: options.model,
      prices: options.prices ?? {},
      budgetUsd: options.budgetUsd,
      spentUsd: generationCostUsd,
    });

  let generated: Awaited<ReturnType<typeof generateInto>> | undefined;
  if (suiteAt.source === "generated") {
    generated = await generateInto(
      options,
      { skillPath, suitePath: suiteAt.path },
      inputs,
      estimateFor,
    );
    generationCostUsd += generated.generation.costUsd;
  }
  const state: EvaluationState = {
    format: EVALUATION_FORMAT,
    skill: { path: skillPath, digest: skillDigest },
    ...inputs,
    suite: { path: suiteAt.path, source: suiteAt.source === "given" ? "given" : "generated" },
    generationCostUsd,
  };
  await writeFileAtomic(statePath, `${JSON.stringify(state, null, 2)}\n`);

  given ??= await checkSuite(suiteAt.path, options.onLog);
  const suite =
    selected?.suite ??
    (given.suite === undefined
      ? undefined
      : (await selectSuiteSkill(given.suite, skillPath)).suite);
  const requirements = suite === undefined ? 0 : requirementCount(suite);
  const estimate =
    generated?.estimate ??
    estimateFor(undefined, suite === undefined ? 0 : plannedRunsOf(suite, 1));
  if (generated === undefined) options.onEstimate?.(estimate);
  const base = {
    format: EVALUATION_FORMAT,
    workDir,
    suite: { path: suiteAt.path, source: suiteAt.source, requirements },
    check: given.check,
    estimate,
    ...(generated === undefined ? {} : { generation: generated.generation }),
  } as const;
  if (!given.check.valid || suite === undefined) {
    const total = generationCostUsd + stored.costUsd;
    return {
      ...base,
      costUsd: { generation: generationCostUsd, runs: stored.costUsd, total },
      complete: false,
    };
  }
  const outcome = await runAndReport(options, {
    suite,
    runDir,
    configId,
    repeats,
    generationCostUsd,
  });
  return { ...base, ...outcome };
}

/** The paired runs of the selected skill, the report files and the verdict. */
async function runAndReport(
  options: EvaluateSkillOptions,
  plan: {
    readonly suite: Suite;
    readonly runDir: string;
    readonly configId: string;
    readonly repeats: number;
    readonly generationCostUsd: number;
  },
): Promise<Pick<EvaluateSkillResult, "run" | "costUsd" | "report" | "verdict" | "complete">> {
  const { suite, runDir, configId, generationCostUsd } = plan;
  const skillId = suite.skills[0]?.id ?? "";
  options.onLog?.(
    `running ${skillId} with ${configId} (${options.agent}, ${options.model}) into ${runDir}`,
  );
  const runBudget =
    options.budgetUsd === undefined
      ? undefined
      : Math.max(0, options.budgetUsd - generationCostUsd);
  const run = await runSuite({
    suite,
    runDir,
    agentOverride: options.agent,
    modelOverride: options.model,
    repeats: plan.repeats,
    ...definedFields({
      concurrency: options.concurrency,
      budgetUsd: runBudget,
      sandbox: options.sandbox,
      cacheDir: options.cacheDir,
      modelEndpoint: options.modelEndpoint,
      agentEnv: options.agentEnv,
    }),
    prices: options.prices ?? {},
    ...definedFields({
      harnessFor: options.harnessFor,
      commandLine: options.commandLine,
      signal: options.signal,
      onProgress: options.onProgress,
      onWarning: options.onLog,
    }),
  });

  const report = await reportRunDir(runDir);
  const jsonPath = join(options.workDir, "report.json");
  const htmlPath = join(options.workDir, "report.html");
  // Through the redacting writer, as every store write: keys never reach a report file.
  await writeRedactedFile(jsonPath, `${JSON.stringify(report, null, 2)}\n`);
  await writeRedactedFile(htmlPath, renderHtmlReport(report, { source: runDir }));
  const verdict = verdictOf(report, configId, skillId);
  const runsCost = storedRuns(runDir).costUsd;
  return {
    run,
    costUsd: { generation: generationCostUsd, runs: runsCost, total: generationCostUsd + runsCost },
    report: { json: resolve(jsonPath), html: resolve(htmlPath) },
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
