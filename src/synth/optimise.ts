/**
 * Meta-prompt optimisation (MPO) of the slot library: per epoch, run a sample of the training
 * split, compare with the previous run on the same tasks, sample transition cases 3:2:1:1, let
 * the critic attribute them and the editor propose a bounded patch, and keep the patch only when
 * the patched library scores strictly better on the same (paired) tasks.
 *
 * One file (over 400 lines) because the epoch loop, transition sampling and patch acceptance are
 * one algorithm (protocol C's MPO) with shared state per epoch; the critic input and slot patching
 * are their own modules.
 */
import { z } from "zod";
import { definedFields } from "../core/defined.js";
import { err, type Result } from "../core/result.js";
import { formatModelSpec, type ModelClient, ModelOutputError } from "../model/index.js";
import { createSeededRandom, type SeededRandom } from "../stats/index.js";
import {
  addTokens,
  type CostRow,
  costRow,
  mergeUsage,
  type RolePrices,
  type RoleUsage,
  type TokenPrice,
} from "./cost.js";
import { type CriticInput, clipText, renderCriticCases } from "./critic-input.js";
import type { FamilyTask } from "./family.js";
import { fillPrompt, promptText } from "./prompts.js";
import { type RetrievalMethod, retrievalMethodOf } from "./retrieval.js";
import { type ModelRole, modelRoles } from "./roles.js";
import {
  type FamilyRunOptions,
  type Method,
  type MethodResult,
  runMethod,
  type TaskRunRecord,
} from "./run.js";
import {
  caseRatio,
  criticInputLimits,
  defaultEpochs,
  defaultOptimiseSeed,
  defaultSampleShare,
  roleTemperatures,
  type SynthSettings,
  synthSettings,
  type TransitionKind,
  transitionKinds,
} from "./settings.js";
import {
  applySlotPatch,
  diffSlotLibraries,
  maxSlotCharacters,
  maxSlotsPerCategory,
  maxSlotsPerPatch,
  renderLibrary,
  type SlotLibrary,
  type SlotPatch,
  slotCategories,
  slotPatchSchema,
} from "./slots.js";
import { type LibraryStore, type PatchRecord, SYNTH_OPTIMISATION_FORMAT } from "./store.js";

export { caseRatio, type TransitionKind, transitionKinds };

/** Transitions per kind. */
export const countTransitions = (
  transitions: readonly Transition[],
): Record<TransitionKind, number> => ({
  regression: transitions.filter((each) => each.kind === "regression").length,
  improvement: transitions.filter((each) => each.kind === "improvement").length,
  "persistent-success": transitions.filter((each) => each.kind === "persistent-success").length,
  "persistent-failure": transitions.filter((each) => each.kind === "persistent-failure").length,
});

export interface Transition {
  readonly taskId: string;
  readonly kind: TransitionKind;
  readonly previous: TaskRunRecord;
  readonly current: TaskRunRecord;
}

/** A lower score is a regression, a higher one an improvement; equal full marks persist as success. */
export function classifyTransitions(
  previous: readonly TaskRunRecord[],
  current: readonly TaskRunRecord[],
): Transition[] {
  const before = new Map(previous.map((record) => [record.taskId, record]));
  const transitions: Transition[] = [];
  for (const record of current) {
    const old = before.get(record.taskId);
    if (old === undefined) continue;
    const kind: TransitionKind =
      record.score < old.score
        ? "regression"
        : record.score > old.score
          ? "improvement"
          : record.score >= 1
            ? "persistent-success"
            : "persistent-failure";
    transitions.push({ taskId: record.taskId, kind, previous: old, current: record });
  }
  return transitions;
}

/**
 * How many cases of each kind to draw: `ratio × unit` (3:2:1:1), and when a kind has fewer
 * cases than its share, the shortfall goes to the kinds that have more, one case at a time to
 * the kind whose `ratio / (drawn + 1)` is highest (ties in the order regression, improvement,
 * persistent success, persistent failure) — so the requested `7 × unit` cases are drawn whenever
 * that many exist, as close to 3:2:1:1 as the available cases allow.
 */
export function caseQuotas(
  available: Readonly<Record<TransitionKind, number>>,
  unit = 1,
): Record<TransitionKind, number> {
  const quotas = {} as Record<TransitionKind, number>;
  let shortfall = 0;
  for (const kind of transitionKinds) {
    const wanted = caseRatio[kind] * unit;
    quotas[kind] = Math.min(wanted, available[kind]);
    shortfall += wanted - quotas[kind];
  }
  while (shortfall > 0) {
    let best: TransitionKind | undefined;
    for (const kind of transitionKinds) {
      if (quotas[kind] >= available[kind]) continue;
      if (
        best === undefined ||
        caseRatio[kind] / (quotas[kind] + 1) > caseRatio[best] / (quotas[best] + 1)
      )
        best = kind;
    }
    if (best === undefined) break;
    quotas[best] += 1;
    shortfall -= 1;
  }
  return quotas;
}

/**
 * The cases the critic sees: `caseQuotas` of each kind, chosen at random (seeded) within the
 * kind, in kind order.
 */
export function sampleCases(
  transitions: readonly Transition[],
  random: SeededRandom,
  unit = 1,
): Transition[] {
  const quotas = caseQuotas(countTransitions(transitions), unit);
  const chosen: Transition[] = [];
  for (const kind of transitionKinds) {
    const pool = transitions.filter((transition) => transition.kind === kind);
    for (let taken = 0; taken < quotas[kind] && pool.length > 0; taken += 1) {
      const [picked] = pool.splice(random.nextBelow(pool.length), 1);
      if (picked !== undefined) chosen.push(picked);
    }
  }
  return chosen;
}

export const attributionSchema = z.strictObject({
  attributions: z.array(
    z.strictObject({
      taskId: z.string(),
      cause: z.enum(["retrieval", "skill", "solver", "other"]),
      slot: z
        .strictObject({ category: z.enum(slotCategories), id: z.string() })
        .nullable()
        .optional(),
      explanation: z.string(),
    }),
  ),
});
export type Attributions = z.infer<typeof attributionSchema>["attributions"];

/** Tokens a failed structured call still consumed (both attempts), from the error's data. */
function usageOfFailure(error: ModelOutputError): { inputTokens: number; outputTokens: number } {
  const usage = error.data.usage as { inputTokens?: unknown; outputTokens?: unknown } | undefined;
  return {
    inputTokens: typeof usage?.inputTokens === "number" ? usage.inputTokens : 0,
    outputTokens: typeof usage?.outputTokens === "number" ? usage.outputTokens : 0,
  };
}

export interface EpochReport {
  readonly epoch: number;
  readonly sample: readonly string[];
  /** What the current library was compared with: `zero-shot` or a library version. */
  readonly reference: string;
  readonly referenceScore: number;
  readonly libraryVersion: string;
  readonly currentScore: number;
  readonly transitions: Readonly<Record<TransitionKind, number>>;
  /** Cases drawn per kind (3:2:1:1, the shortfall of empty kinds redistributed). */
  readonly quotas: Readonly<Record<TransitionKind, number>>;
  readonly cases: readonly { readonly taskId: string; readonly kind: TransitionKind }[];
  /** The critic prompt's cases section: its size, bound and every cut made to fit it. */
  readonly criticInput: Omit<CriticInput, "text">;
  readonly attributions: Attributions;
  readonly patch?: PatchRecord;
  /** The library version in force after this epoch. */
  readonly resultVersion: string;
}

/**
 * What the slot library is optimised for: per-task synthesis (MPO, the default), or the one
 * static skill written from the pool and applied to every task (the SkillOpt-like baseline).
 */
export const optimiseTargets = ["synth", "skillopt"] as const;
export type OptimiseTarget = (typeof optimiseTargets)[number];

export interface OptimiseReport {
  readonly format: typeof SYNTH_OPTIMISATION_FORMAT;
  readonly family: string;
  readonly target: OptimiseTarget;
  readonly model: string;
  /** The model of each role (solver, synthesiser, critic, editor). */
  readonly models: Readonly<Record<ModelRole, string>>;
  /** Protocol C's numbers in force: epochs, share, 3:2:1:1, slot limits, temperatures, bounds. */
  readonly settings: SynthSettings;
  /** The family's evaluator settings (dataset hash, interpreter, limits), when it has any. */
  readonly familySettings?: Readonly<Record<string, string | number>>;
  /** `bm25` or `embedding:<model>`. */
  readonly retrieval: RetrievalMethod;
  readonly startVersion: string;
  readonly finalVersion: string;
  readonly epochs: readonly EpochReport[];
  readonly usage: RoleUsage;
  readonly cost: readonly CostRow[];
}

export interface OptimiseOptions extends FamilyRunOptions {
  readonly trainTasks: readonly FamilyTask[];
  readonly store: LibraryStore;
  /** Default `synth`; `skillopt` evaluates each library by the single static skill it writes. */
  readonly target?: OptimiseTarget;
  readonly epochs?: number;
  readonly sampleShare?: number;
  readonly seed?: number;
  /** The seed of the split `trainTasks` came from (recorded in the report). */
  readonly splitSeed?: number;
  /** The list price (one model, or one per role): cost rows then carry an estimate in dollars. */
  readonly price?: TokenPrice | RolePrices;
  /** Each role's model spec, recorded in the report (default: `model` for every role). */
  readonly modelSpecs?: Readonly<Record<ModelRole, string>>;
}

function sampleTasks(
  tasks: readonly FamilyTask[],
  share: number,
  random: SeededRandom,
): FamilyTask[] {
  const remaining = [...tasks].sort((left, right) => left.id.localeCompare(right.id));
  const count = Math.min(remaining.length, Math.max(1, Math.round(tasks.length * share)));
  const chosen: FamilyTask[] = [];
  while (chosen.length < count) {
    const [picked] = remaining.splice(random.nextBelow(remaining.length), 1);
    if (picked !== undefined) chosen.push(picked);
  }
  return chosen;
}

interface CallOptions {
  readonly signal?: AbortSignal;
}

/** The critic's attributions; an answer that is not valid JSON costs the epoch them, not the run. */
async function askCritic(
  critic: ModelClient,
  input: CallOptions & { library: SlotLibrary; slotDiff: string; cases: string },
): Promise<{
  object: { attributions: Attributions };
  usage: { inputTokens: number; outputTokens: number };
  error?: string;
}> {
  return critic
    .generateObject(attributionSchema, {
      role: "critic",
      temperature: roleTemperatures.critic,
      system: promptText("critic-v2.system.md"),
      prompt: fillPrompt(promptText("critic-v1.user.md"), {
        libraryVersion: input.library.version,
        library: renderLibrary(input.library),
        slotDiff: input.slotDiff,
        cases: input.cases,
      }),
      ...(input.signal === undefined ? {} : { abortSignal: input.signal }),
    })
    .catch((error: unknown) => {
      if (!(error instanceof ModelOutputError)) throw error;
      return {
        object: { attributions: [] },
        usage: usageOfFailure(error),
        error: error.message,
      };
    });
}

/**
 * The editor's patch. Protocol C's editor works from the run, not from the attributions alone:
 * it gets the run summary (scores, transitions, cases) and the latest slot diff beside them.
 */
async function askEditor(
  editor: ModelClient,
  input: CallOptions & {
    library: SlotLibrary;
    attributions: Attributions;
    slotDiff: string;
    runSummary: string;
  },
): Promise<{
  object: SlotPatch;
  usage: { inputTokens: number; outputTokens: number };
  error?: string;
}> {
  return editor
    .generateObject(slotPatchSchema, {
      role: "editor",
      temperature: roleTemperatures.editor,
      system: fillPrompt(promptText("editor-v1.system.md"), {
        maxSlotsPerPatch: String(maxSlotsPerPatch),
        maxSlotsPerCategory: String(maxSlotsPerCategory),
        maxSlotCharacters: String(maxSlotCharacters),
      }),
      prompt: fillPrompt(promptText("editor-v2.user.md"), {
        libraryVersion: input.library.version,
        library: renderLibrary(input.library),
        runSummary: input.runSummary,
        slotDiff: input.slotDiff,
        attributions: JSON.stringify(input.attributions, null, 2),
      }),
      ...(input.signal === undefined ? {} : { abortSignal: input.signal }),
    })
    .catch((error: unknown) => {
      if (!(error instanceof ModelOutputError)) throw error;
      const empty: SlotPatch = { rationale: "", operations: [] };
      return { object: empty, usage: usageOfFailure(error), error: error.message };
    });
}

/** The run summary the editor reads: what was compared, the scores, the transitions, the cases. */
export function runSummaryText(
  epoch: {
    epoch: number;
    reference: string;
    referenceScore: number;
    libraryVersion: string;
    currentScore: number;
    transitions: Readonly<Record<string, number>>;
    cases: readonly { taskId: string; kind: string }[];
  },
  sampleSize: number,
): string {
  const transitions = Object.entries(epoch.transitions)
    .map(([kind, count]) => `${kind} ${count}`)
    .join(", ");
  return [
    `Epoch ${epoch.epoch}: ${sampleSize} training tasks.`,
    `Previous run (${epoch.reference}): mean score ${epoch.referenceScore.toFixed(3)}.`,
    `This run (library ${epoch.libraryVersion}): mean score ${epoch.currentScore.toFixed(3)}.`,
    `Transitions: ${transitions}.`,
    `Cases shown to the critic: ${epoch.cases.map((each) => `${each.taskId} (${each.kind})`).join(", ") || "none"}.`,
  ].join("\n");
}

/** What stays the same across the epochs of one optimisation. */
interface OptimiseContext {
  readonly options: OptimiseOptions;
  readonly epochs: number;
  readonly share: number;
  readonly random: SeededRandom;
  readonly progress: (line: string) => void;
  /** The same loop either way; only how a library is turned into the solver's skill differs. */
  readonly optimised: Method;
  readonly taskById: ReadonlyMap<string, FamilyTask>;
}

/** What an epoch changes: the library in force, the one before it, the tokens spent. */
interface OptimiseState {
  library: SlotLibrary;
  reference: SlotLibrary | undefined;
  usage: RoleUsage;
  zeroShotUsage: RoleUsage | undefined;
}

/** One run of the family's method over `tasks`; its tokens are added to the state's usage. */
async function runCounted(
  context: OptimiseContext,
  state: OptimiseState,
  tasks: readonly FamilyTask[],
  method: Method,
  slots: SlotLibrary,
): Promise<MethodResult> {
  const { options } = context;
  const result = await runMethod({
    family: options.family,
    model: options.model,
    ...(options.models === undefined ? {} : { models: options.models }),
    tasks,
    pool: options.pool,
    method,
    library: slots,
    ...definedFields({ retrieval: options.retrieval, concurrency: options.concurrency }),
    onProgress: context.progress,
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  });
  state.usage = mergeUsage(state.usage, result.usage);
  return result;
}

/** The epoch's record before the critic: the sample, both runs' scores, transitions and cases. */
type EpochBase = Omit<EpochReport, "attributions" | "patch" | "resultVersion">;

/**
 * Run the sample with the previous library (zero-shot in the first epoch) and the current one,
 * and draw the transition cases the critic reads.
 */
async function compareOnSample(
  context: OptimiseContext,
  state: OptimiseState,
  epoch: number,
  sample: readonly FamilyTask[],
): Promise<{ base: EpochBase; current: MethodResult; cases: Transition[]; casesText: string }> {
  const { options, optimised, progress } = context;
  const { library, reference } = state;
  const previous =
    reference === undefined
      ? await runCounted(context, state, sample, "zero-shot", library)
      : await runCounted(context, state, sample, optimised, reference);
  if (reference === undefined && state.zeroShotUsage === undefined)
    state.zeroShotUsage = previous.usage;
  const current = await runCounted(context, state, sample, optimised, library);
  const transitions = classifyTransitions(previous.records, current.records);
  const cases = sampleCases(transitions, context.random);
  const criticInput = renderCriticCases(options.family, context.taskById, cases, options.pool);
  if (criticInput.truncations.length > 0 || criticInput.omittedCases.length > 0)
    progress(
      `epoch ${epoch}: critic input ${criticInput.characters} characters (bound ${criticInput.limits.casesCharacters}); ${criticInput.truncations.length} texts cut, ${criticInput.omittedCases.length} cases left out`,
    );
  const { text: casesText, ...criticRecord } = criticInput;
  const base: EpochBase = {
    epoch,
    sample: sample.map((task) => task.id),
    reference: reference === undefined ? "zero-shot" : reference.version,
    referenceScore: previous.meanScore,
    libraryVersion: library.version,
    currentScore: current.meanScore,
    transitions: countTransitions(transitions),
    quotas: caseQuotas(countTransitions(transitions)),
    cases: cases.map((transition) => ({ taskId: transition.taskId, kind: transition.kind })),
    criticInput: criticRecord,
  };
  return { base, current, cases, casesText };
}

/**
 * The critic's attributions (only for the cases shown, slots that exist) and the editor's patch,
 * which reads the run summary and the latest slot diff beside them.
 */
async function critiqueAndEdit(
  context: OptimiseContext,
  state: OptimiseState,
  compared: { base: EpochBase; cases: readonly Transition[]; casesText: string },
  sampleSize: number,
): Promise<{ attributions: Attributions; patch: SlotPatch; editorError?: string }> {
  const { options, progress } = context;
  const { library, reference } = state;
  const { base, cases } = compared;
  const signal = options.signal === undefined ? {} : { signal: options.signal };
  const slotDiff =
    reference === undefined
      ? "(the previous run was the zero-shot solver, without synthesis)"
      : clipText(diffSlotLibraries(reference, library), criticInputLimits.slotDiffCharacters).text;
  const critic = await askCritic(options.models?.critic ?? options.model, {
    library,
    slotDiff,
    cases: compared.casesText,
    ...signal,
  });
  state.usage = addTokens(
    state.usage,
    "critic",
    critic.usage.inputTokens,
    critic.usage.outputTokens,
  );
  if (critic.error !== undefined)
    progress(`epoch ${base.epoch}: critic output rejected: ${critic.error}`);
  const caseIds = new Set(cases.map((transition) => transition.taskId));
  // A named slot that does not exist is the critic's guess, not evidence: it is dropped.
  const attributions: Attributions = critic.object.attributions
    .filter((attribution) => caseIds.has(attribution.taskId))
    .map((attribution) =>
      attribution.slot != null &&
      !library[attribution.slot.category].some((slot) => slot.id === attribution.slot?.id)
        ? { ...attribution, slot: null }
        : attribution,
    );
  const editor = await askEditor(options.models?.editor ?? options.model, {
    library,
    attributions,
    slotDiff,
    runSummary: runSummaryText(base, sampleSize),
    ...signal,
  });
  state.usage = addTokens(
    state.usage,
    "editor",
    editor.usage.inputTokens,
    editor.usage.outputTokens,
  );
  return {
    attributions,
    patch: editor.object,
    ...(editor.error === undefined ? {} : { editorError: editor.error }),
  };
}

/**
 * Apply the editor's patch and keep it only when the patched library scores strictly better on
 * the same sample; the decision is saved as a patch record either way.
 */
async function judgePatch(
  context: OptimiseContext,
  state: OptimiseState,
  epoch: number,
  sample: readonly FamilyTask[],
  current: MethodResult,
  edit: { patch: SlotPatch; editorError?: string },
): Promise<PatchRecord> {
  const { store } = context.options;
  const { progress } = context;
  const { library } = state;
  const { patch, editorError } = edit;
  const nextVersion = await store.nextVersion();
  const applied: Result<SlotLibrary, string> =
    editorError === undefined
      ? applySlotPatch(library, patch.operations, nextVersion)
      : err(`the editor gave no valid patch: ${editorError}`);
  const common = {
    epoch,
    baseVersion: library.version,
    rationale: patch.rationale,
    operations: patch.operations,
    createdAt: new Date().toISOString(),
  };
  if (!applied.ok) {
    const record = await store.savePatch({
      ...common,
      status: "rejected-invalid",
      reason: applied.error,
      diff: "(not applied)",
    });
    progress(`epoch ${epoch}: patch ${record.number} rejected: ${applied.error}`);
    return record;
  }
  const candidate = applied.value;
  const candidateRun = await runCounted(context, state, sample, context.optimised, candidate);
  const accepted = candidateRun.meanScore > current.meanScore;
  const record = await store.savePatch({
    ...common,
    ...(accepted ? { resultVersion: candidate.version } : {}),
    status: accepted ? "accepted" : "rejected-no-gain",
    reason: accepted
      ? `mean score ${candidateRun.meanScore.toFixed(3)} > ${current.meanScore.toFixed(3)} on the same ${sample.length} tasks`
      : `mean score ${candidateRun.meanScore.toFixed(3)} is not above ${current.meanScore.toFixed(3)} on the same ${sample.length} tasks`,
    diff: diffSlotLibraries(library, candidate),
    scores: {
      base: current.meanScore,
      candidate: candidateRun.meanScore,
      tasks: sample.map((task) => task.id),
    },
  });
  progress(`epoch ${epoch}: patch ${record.number} ${record.status}: ${record.reason}`);
  if (accepted) {
    await store.save(candidate);
    state.reference = library;
    state.library = candidate;
  }
  return record;
}

/** One epoch of MPO: compare, critique, edit, judge the patch. */
async function runEpoch(
  context: OptimiseContext,
  state: OptimiseState,
  epoch: number,
): Promise<EpochReport> {
  const sample = sampleTasks(context.options.trainTasks, context.share, context.random);
  context.progress(
    `epoch ${epoch}/${context.epochs}: ${sample.length} training tasks, library ${state.library.version}`,
  );
  const compared = await compareOnSample(context, state, epoch, sample);
  const edit = await critiqueAndEdit(context, state, compared, sample.length);
  const patch = await judgePatch(context, state, epoch, sample, compared.current, edit);
  return {
    ...compared.base,
    attributions: edit.attributions,
    patch,
    resultVersion: state.library.version,
  };
}

/** The report of a finished optimisation: models per role, settings, versions, epochs, cost. */
function optimiseReport(
  context: OptimiseContext,
  state: OptimiseState,
  startVersion: string,
  reports: readonly EpochReport[],
): OptimiseReport {
  const { options, epochs, share } = context;
  const { family, model } = options;
  const seed = options.seed ?? defaultOptimiseSeed;
  const zeroShot = state.zeroShotUsage ?? {};
  return {
    format: SYNTH_OPTIMISATION_FORMAT,
    family: family.name,
    target: options.target ?? "synth",
    model: `${model.spec.provider}:${model.spec.model}`,
    models:
      options.modelSpecs ??
      (Object.fromEntries(
        modelRoles.map((role) => [role, formatModelSpec((options.models?.[role] ?? model).spec)]),
      ) as Record<ModelRole, string>),
    settings: synthSettings({
      splitSeed: options.splitSeed ?? 0,
      epochs,
      sampleShare: share,
      seed,
      ...(family.trainShare === undefined ? {} : { trainShare: family.trainShare }),
      ...(options.retrieval?.k === undefined ? {} : { topK: options.retrieval.k }),
    }),
    ...(family.settings === undefined ? {} : { familySettings: family.settings }),
    retrieval: retrievalMethodOf(options.retrieval),
    startVersion,
    finalVersion: state.library.version,
    epochs: reports,
    usage: state.usage,
    cost: [
      costRow("zero-shot (epoch 1 sample)", zeroShot, zeroShot, options.price),
      costRow("optimisation total", state.usage, zeroShot, options.price),
    ],
  };
}

export async function optimiseLibrary(options: OptimiseOptions): Promise<OptimiseReport> {
  const context: OptimiseContext = {
    options,
    epochs: options.epochs ?? defaultEpochs,
    share: options.sampleShare ?? defaultSampleShare,
    random: createSeededRandom(options.seed ?? defaultOptimiseSeed),
    progress: options.onProgress ?? (() => {}),
    optimised: options.target ?? "synth",
    taskById: new Map(options.trainTasks.map((task) => [task.id, task])),
  };
  const startVersion = await options.store.current();
  const state: OptimiseState = {
    library: await options.store.load(startVersion),
    reference: undefined,
    usage: {},
    zeroShotUsage: undefined,
  };
  const reports: EpochReport[] = [];
  for (let epoch = 1; epoch <= context.epochs; epoch += 1)
    reports.push(await runEpoch(context, state, epoch));
  return optimiseReport(context, state, startVersion, reports);
}
