/** The public environment API: workspaces, setup detection, sandboxes and verifiers. */
export * from "./sandbox/index.js";
export {
  type DetectSetupOptions,
  detectSetup,
  type SetupLanguage,
  type SetupPlan,
} from "./setup/detect.js";
export {
  type FlagDefinition,
  type FlagEffect,
  flagDefinition,
  flagForLimit,
  flagsForceZero,
  type PairMeasurement,
  pairMeasurement,
  RUN_FLAGS,
  type RunFlag,
} from "./verifier/flags.js";
export { parseJunitXml } from "./verifier/junit.js";
export {
  findKeywordOnlyChecks,
  type KeywordOnlyCheck,
  type ScannedFile,
} from "./verifier/keyword-scan.js";
export {
  installVerifierFiles,
  isCollectionError,
  type RunVerifierOptions,
  readJunitReports,
  runVerifier,
} from "./verifier/run.js";
export { parseRunnerSummary, type SummaryParse, stripAnsi } from "./verifier/summary.js";
export type {
  CheckResult,
  CheckStatus,
  VerifierFile,
  VerifierFlag,
  VerifierResult,
  VerifierSpec,
} from "./verifier/types.js";
export {
  type ReferenceSolution,
  type ValidateVerifierOptions,
  type VerifierValidation,
  validateVerifier,
} from "./verifier/validate.js";
export { defaultCacheDir } from "./workspace/cache.js";
export { type TreeDigestOptions, treeDigest } from "./workspace/digest.js";
export { acquireLock, type LockOptions, type LockOutcome } from "./workspace/lock.js";
export {
  detectMethod,
  type MaterialiseMethod,
  type MaterialiseOptions,
  materialiseWorkspace,
  parseMaterialiseMethod,
  type Workspace,
} from "./workspace/materialise.js";
export {
  type PrepareBaseOptions,
  type PreparedBase,
  prepareBase,
  type SetupChoice,
} from "./workspace/prepare.js";
export {
  cloneLocation,
  describeSource,
  parseRepositorySource,
  type RepositorySource,
  repositoryName,
  sourceIdentity,
} from "./workspace/source.js";
