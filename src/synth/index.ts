/** Test-time skill synthesis: task families, trajectory pool, retrieval, synthesis, MPO. */

// The shared limiter, re-exported where synthesis callers found it before it moved to core.
export { mapLimit, runLanes } from "../core/limit.js";
export { type BuildPoolOptions, type BuildPoolResult, buildPool } from "./build-pool.js";
export {
  type BuiltinFamilyOptions,
  BuiltinTaskFamily,
  defaultBuiltinDirectory,
  defaultSplitSeed,
  extractCode,
  renderSolverContext,
} from "./builtin.js";
export { resolveEmbeddingModel } from "./config.js";
export {
  type CostRow,
  costRow,
  estimatedDollars,
  type RolePrices,
  type RoleUsage,
  relativeCost,
  renderCostTable,
  roles,
  type TokenPrice,
  totalTokens,
} from "./cost.js";
export {
  type CriticCase,
  type CriticInput,
  type CriticTruncation,
  clipText,
  renderCriticCases,
} from "./critic-input.js";
export {
  type AttemptScore,
  type FamilyTask,
  renderVisible,
  type SelfCheckResult,
  type SolverAttempt,
  type SolverContext,
  type SolveSettings,
  type Split,
  seededSplit,
  type TaskFamilyV1,
  type VisibleTask,
  visibleView,
} from "./family.js";
export {
  doctestAsserts,
  type HumanEvalFamilyOptions,
  HumanEvalTaskFamily,
  humanEvalPathOf,
  moduleOf,
  scoreOf,
} from "./humaneval.js";
export {
  defaultHumanEvalMemoryBytes,
  defaultHumanEvalPython,
  defaultHumanEvalTaskTimeoutMs,
  type HumanEvalCheck,
  type HumanEvalCheckOptions,
  type HumanEvalOutcome,
  type HumanEvalStatus,
  humanEvalHarnessSource,
  runHumanEvalChecks,
} from "./humaneval-harness.js";
export {
  type Attributions,
  attributionSchema,
  caseQuotas,
  caseRatio,
  classifyTransitions,
  countTransitions,
  type EpochReport,
  type OptimiseOptions,
  type OptimiseReport,
  type OptimiseTarget,
  optimiseLibrary,
  optimiseTargets,
  sampleCases,
  type Transition,
  type TransitionKind,
} from "./optimise.js";
export {
  appendPoolEntry,
  type PoolEntry,
  poolEntrySchema,
  poolSchemaVersion,
  readPool,
  renderEvidence,
} from "./pool.js";
export { promptVersion } from "./prompts.js";
export { hidingMounts, passRateOfChecks, runPythonFiles } from "./python-exec.js";
export { type PythonReactOptions, solvePythonReact } from "./react.js";
export {
  defaultTopK,
  EmbeddingIndex,
  type RetrievalMethod,
  type RetrievalOptions,
  type RetrievalRecord,
  retrievalMethodOf,
  retrieve,
  retrieveByEmbedding,
  retrieveEntries,
  tokenize,
} from "./retrieval.js";
export {
  type ModelRole,
  modelRoles,
  type RoleModelChoice,
  type RoleModelChoices,
  type RoleModels,
  resolveRoleModels,
  roleVariables,
} from "./roles.js";
export {
  type BestOfNRecord,
  type ComparisonReport,
  compareMethods,
  defaultSamples,
  defaultSampleTemperature,
  type Method,
  type MethodResult,
  methods,
  modelsLine,
  renderComparison,
  runMethod,
  type TaskRunRecord,
} from "./run.js";
export {
  type CriticInputLimits,
  criticInputLimits,
  defaultEpochs,
  defaultOptimiseSeed,
  defaultSampleShare,
  defaultTrainShare,
  roleTemperatures,
  SYNTH_RUN_FORMAT,
  SYNTH_SETTINGS_FORMAT,
  type SynthSettings,
  synthSettings,
} from "./settings.js";
export {
  applySlotPatch,
  diffSlotLibraries,
  maxSlotCharacters,
  maxSlotsPerCategory,
  maxSlotsPerPatch,
  parseSlotLibrary,
  type Slot,
  type SlotCategory,
  type SlotLibrary,
  type SlotOperation,
  type SlotPatch,
  slotLibraryProblems,
  touchedSlots,
} from "./slots.js";
export { initialLibrary, initialLibraryVersion, LibraryStore, type PatchRecord } from "./store.js";
export {
  pathsInDiff,
  renderRequirement,
  type SuiteFamilyOptions,
  SuiteTaskFamily,
  suiteVisibleFields,
} from "./suite-family.js";
export {
  checkSynthesisedSkill,
  extractSkillMarkdown,
  requiredSections,
  type SynthesisResult,
  type SynthesisTarget,
  synthesiseSkill,
  synthesisPrompt,
} from "./synthesise.js";
