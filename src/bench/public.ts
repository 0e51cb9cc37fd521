/**
 * `skillsmith/bench`: skill evaluation (protocol A). Suites (load, validate), paired runs
 * (`runSuite`, on this machine or on a Redis queue), the results store, reports with verdicts,
 * importers of public benchmark layouts and generation of requirements and verifiers.
 *
 * @packageDocumentation
 */

export { type ArmMatrix, type ArmPairComparison, armMatrices } from "./analysis/arms.js";
export { type ReportFilter, type ReportRunDirOptions, reportRunDir } from "./analysis/load.js";
export { renderReportText } from "./analysis/render.js";
export type { BuildReportOptions } from "./analysis/report.js";
export {
  type BenchReport,
  buildReport,
  type ConfigSummary,
  type Profile,
  REPORT_FORMAT,
  type RequirementOutcome,
} from "./analysis/report.js";
export type {
  DesignRecommendation,
  Multiplicity,
  RepeatVariability,
  StatisticsSettings,
} from "./analysis/statistics.js";
export {
  type CheckSuiteOptions,
  checkSuite,
  type RequirementCheck,
  type RequirementStatus,
  type SuiteCheck,
} from "./check/check.js";
export { checkJson, renderCheckText } from "./check/render.js";
// Experimental (see the README): generation calls a model and its prompts still change.
export {
  type GenerateSuiteOptions,
  type GenerateSuiteResult,
  generateSuite,
} from "./generate/generate.js";
export type { ImportProblem, ImportResult } from "./import/common.js";
export { type HarborImportOptions, importHarbor } from "./import/harbor.js";
export {
  importSweSkillsBench,
  type SweSkillsBenchImportOptions,
} from "./import/swe-skills-bench.js";
// Experimental (see the README): distributed runs.
export { type QueueRunOptions, runSuiteOnQueue } from "./queue/coordinator.js";
export {
  type QueueWorkerOptions,
  type QueueWorkerSummary,
  runQueueWorker,
} from "./queue/worker.js";
export {
  type ConfigurationOrigin,
  type EffectiveConfiguration,
  overriddenConfigurationId,
  resolveConfigurations,
} from "./run/configurations.js";
export type { RunEvent, RunListeners } from "./run/events.js";
export type { ModelEndpoint } from "./run/model-endpoint.js";
export type {
  LoadedSuiteSelection,
  RunEnvironment,
  RunInputs,
  RunPolicy,
  RunSuiteOptions,
  RunSuiteSummary,
  SandboxKind,
} from "./run/options.js";
export { Predictions } from "./run/predictions.js";
export type { RunProgress } from "./run/progress.js";
export {
  type QuickstartEvaluation,
  type QuickstartEvaluationOptions,
  runQuickstartEvaluation,
} from "./run/quickstart.js";
export {
  type RegradeOptions,
  type RegradeSummary,
  type RequirementChange,
  regradeRunDir,
} from "./run/regrade.js";
export { runSuite } from "./run/runner.js";
export * from "./run/task-check.js";
export { type RunManifest, readManifest } from "./store/manifest.js";
export {
  type Arm,
  type AttemptRecord,
  RESULTS_FILE,
  ResultsStore,
  type RunKey,
  type RunResult,
} from "./store/results.js";
export { withDistractors } from "./suite/distractors.js";
export {
  formatSuiteProblem,
  loadSuite,
  loadSuiteSelection,
  selectFromSuite,
  validateSuite,
} from "./suite/load.js";
export { parseRequirementMarkdown, type Requirement } from "./suite/requirement.js";
export {
  AGENT_KINDS,
  type AgentKind,
  type Configuration,
  SUITE_FORMAT,
} from "./suite/schema.js";
export type {
  Suite,
  SuiteProblem,
  SuiteRequirement,
  SuiteSkill,
  SuiteValidation,
} from "./suite/types.js";
export { parseVariantOption, type VariantOption, withVariants } from "./suite/variants.js";
