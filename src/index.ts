/**
 * skillsmith as a library: what most programs need, cheap to import. Importing this module
 * loads the statistics, the skill model, the suite loader and the registries (with `yaml` and
 * `zod`), never the AI SDK, dockerode, BullMQ, tree-sitter, Vega or SQLite: `runSuite` and
 * `reportRunDir` load the runner and the results store on their first call.
 *
 * More of each area under its subpath: `skillsmith/stats`, `skillsmith/skill`,
 * `skillsmith/bench`, `skillsmith/agents`, `skillsmith/env`, `skillsmith/model`,
 * `skillsmith/report`, `skillsmith/wiki`, `skillsmith/synth`. What is stable and what is
 * experimental: the README, "Using skillsmith as a library".
 *
 * @packageDocumentation
 */
import type { ReportRunDirOptions } from "./bench/analysis/load.js";
import type { BenchReport } from "./bench/analysis/report.js";
import type { RunSuiteOptions, RunSuiteSummary } from "./bench/run/options.js";
import type { EvaluateSkillOptions, EvaluateSkillResult } from "./report/evaluate.js";

export type { AgentHarnessV1, AgentRunRequest, Trajectory } from "./agents/public.js";
export {
  createHarness,
  type HarnessFactory,
  harnessNames,
  registerHarness,
  unregisterHarness,
} from "./agents/registry.js";
// Types only: building and rendering a report in memory is `skillsmith/bench` (it loads the
// results store's module); `reportRunDir` below reads a run directory.
export type { BenchReport, BuildReportOptions, Profile } from "./bench/analysis/report.js";
export type { ConfigurationOrigin } from "./bench/run/configurations.js";
export type { RunSuiteOptions, RunSuiteSummary } from "./bench/run/options.js";
export type { RunProgress } from "./bench/run/progress.js";
export { formatSuiteProblem, loadSuite, validateSuite } from "./bench/suite/load.js";
export type { Configuration } from "./bench/suite/schema.js";
export type { Suite, SuiteProblem, SuiteValidation } from "./bench/suite/types.js";
export {
  type ErrorOptions,
  InfrastructureError,
  InputError,
  type InputLocation,
  InternalError,
  isSkillsmithError,
  SkillsmithError,
  UnsupportedError,
  UsageError,
} from "./core/errors.js";
export {
  type CreateSandboxOptions,
  createSandbox,
  type RegisteredSandboxOptions,
  registerSandbox,
  type SandboxFactory,
  type SandboxKind,
  sandboxKinds,
  unregisterSandbox,
} from "./env/sandbox/factory.js";
export type {
  SandboxExecRequest,
  SandboxExecResult,
  SandboxV1,
} from "./env/sandbox/types.js";
export type {
  CostEstimate,
  EvaluateSkillOptions,
  EvaluateSkillResult,
  SkillVerdict,
} from "./report/evaluate.js";
export { auditSkillFolder } from "./skill/audit.js";
export { inspectSkillFolder } from "./skill/inspect.js";
export { installSkill } from "./skill/install.js";
export { loadSkillFolder } from "./skill/parse.js";
export type { AuditReport, Finding, SkillValidationResult } from "./skill/types.js";
export { validateSkillFolder } from "./skill/validate.js";
export { classify, type SkillClass } from "./stats/classify.js";
export { detectableEffect } from "./stats/detectable.js";
export { benjaminiHochberg } from "./stats/multiplicity.js";
export { requirementsForPower, signFlipPower } from "./stats/power.js";
export { type SignFlipResult, signFlipTest } from "./stats/signflip.js";
export { type DeltaSummary, summarizeDeltas } from "./stats/summary.js";

/**
 * Run every missing run of a suite (protocol A.5) and store the results in `options.runDir`;
 * resumable. The same function as `runSuite` of `skillsmith/bench`, loaded on first call so that
 * importing skillsmith stays cheap.
 */
export async function runSuite(options: RunSuiteOptions): Promise<RunSuiteSummary> {
  const runner = await import("./bench/run/runner.js");
  return runner.runSuite(options);
}

/**
 * The report of a run directory (verdicts, sensitivity, statistics across skills), read from its
 * store; nothing runs. The same as `reportRunDir` of `skillsmith/bench`, loaded on first call.
 */
export async function reportRunDir(
  runDir: string,
  options: ReportRunDirOptions = {},
): Promise<BenchReport> {
  const load = await import("./bench/analysis/load.js");
  return load.reportRunDir(runDir, options);
}

/**
 * The one-command evaluation of a skill on a repository (`skillsmith eval`): generate or reuse a
 * suite, check it, estimate the cost, run the pairs, write the report, return the verdict with its
 * evidence. Resumable: the same options again continue. Loaded on first call.
 */
export async function evaluateSkill(options: EvaluateSkillOptions): Promise<EvaluateSkillResult> {
  const evaluate = await import("./report/evaluate.js");
  return evaluate.evaluateSkill(options);
}

// Each module's error codes: exporting their types brings every `ErrorCodeRegistry` augmentation
// into the published declarations, so a consumer sees `ErrorCode` as the registered codes.
export type { AgentsErrorCode } from "./agents/error-codes.js";
export type { BenchErrorCode } from "./bench/error-codes.js";
export type { CoreErrorCode } from "./core/error-codes.js";
export type { ErrorCode } from "./core/errors.js";
export type { EnvErrorCode } from "./env/error-codes.js";
export type { ModelErrorCode } from "./model/error-codes.js";
export type { ReportErrorCode } from "./report/error-codes.js";
export type { SkillErrorCode } from "./skill/error-codes.js";
export type { StatsErrorCode } from "./stats/error-codes.js";
export type { SynthErrorCode } from "./synth/error-codes.js";
export type { WikiErrorCode } from "./wiki/error-codes.js";
