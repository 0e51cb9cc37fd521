/** The public environment API: workspaces, setup detection, sandboxes and verifiers. */

export { acquireLock, type LockOptions, type LockOutcome } from "../core/lock.js";
export { findOnPath } from "./sandbox/bubblewrap.js";
export * from "./sandbox/index.js";
export {
  DEFAULT_PYTHON,
  type DetectSetupOptions,
  detectSetup,
  type EnvironmentLayout,
  PREPARED_ENVIRONMENT_PATH,
  type SetupLanguage,
  type SetupNetwork,
  type SetupPlan,
  type SetupStep,
  SYSTEM_PATH,
  type Toolchain,
} from "./setup/detect.js";
export {
  cacheableInstalls,
  type InstallCacheRecord,
  type ServedInstall,
} from "./setup/install-caches.js";
export {
  type NetworkProbe,
  packageIndexUrl,
  probePackageIndex,
  probeUrl,
  type SetupNetworkChoice,
} from "./setup/network.js";
export { inPreparedRuntime, type PreparedRuntime, withPreparedRuntime } from "./setup/runtime.js";
export {
  findTestTimeInstalls,
  programsStarted,
  type TestTimeInstall,
  testTimeNetworkProblem,
} from "./setup/test-time-installs.js";
export {
  type CollectionDiagnosis,
  type DiagnoseInput,
  diagnoseCollectionError,
  moduleNamesOf,
} from "./verifier/diagnose.js";
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
export {
  assessChannelRun,
  type ChannelRunInput,
  type IntegrityAssessment,
  type IntegrityFlag,
  judgeResult,
  junitName,
} from "./verifier/integrity/assess.js";
export {
  BYTECODE_MOUNT_PATH,
  bytecodeCacheOption,
  verifierBytecodeCache,
} from "./verifier/integrity/bytecode-cache.js";
export {
  type Canary,
  type CanaryPlan,
  canarySource,
  matchesFunctionPatterns,
  planCanaries,
} from "./verifier/integrity/canary.js";
export {
  type ChannelHello,
  type ChannelOutcome,
  type ChannelRecord,
  ChannelServer,
} from "./verifier/integrity/channel.js";
export {
  type DefinedTest,
  type InventoryModule,
  inventoryFromRun,
  moduleOf,
  type OpaqueInventory,
  type PytestInventory,
  type VerifierInventory,
} from "./verifier/integrity/inventory.js";
export {
  BATCH_ROOT,
  type BatchAnswer,
  type BatchJob,
  type PlainPytestCommand,
  plainPytestCommand,
  takeInventoryBatch,
} from "./verifier/integrity/inventory-batch.js";
export {
  findingLine,
  isTestFile,
  PATCH_RULES,
  type PatchFinding,
  type PatchRule,
  scanPatch,
} from "./verifier/integrity/patch-scan.js";
export {
  CHANNEL_MOUNT_PATH,
  openVerifierChannel,
  PLUGIN_MODULE,
  pluginSourcePath,
  type VerifierChannel,
} from "./verifier/integrity/plugin.js";
export {
  type ChannelAdditions,
  InventoryMemo,
  injectCanaries,
  junitShortfall,
  type ListedRun,
  runAndTakeInventory,
  runWithChannel,
  type ScoredChannelRun,
  takeInventory,
  withLimitHit,
} from "./verifier/integrity/session.js";
export { parseJunitXml } from "./verifier/junit.js";
export {
  findKeywordOnlyChecks,
  type KeywordOnlyCheck,
  keywordOnlyShare,
  type ScannedFile,
} from "./verifier/keyword-scan.js";
export {
  readOnlyVerifierFolder,
  type VerifierFolder,
  verifierFolders,
} from "./verifier/read-only-folder.js";
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
export { cloneBundle } from "./workspace/bundle.js";
export { defaultCacheDir } from "./workspace/cache.js";
export { type TreeDigestOptions, treeDigest } from "./workspace/digest.js";
export {
  freshWorkspaceDigest,
  materialiseVerified,
  type VerifiedBase,
  verifyBase,
} from "./workspace/identity.js";
export {
  detectMethod,
  type MaterialiseMethod,
  type MaterialiseOptions,
  materialiseWorkspace,
  parseMaterialiseMethod,
  type Workspace,
} from "./workspace/materialise.js";
export {
  formatSetupLog,
  type PrepareBaseOptions,
  type PreparedBase,
  prepareBase,
  type SetupChoice,
  SetupFailedError,
  type SetupReport,
  type SetupStepOutcome,
} from "./workspace/prepare.js";
// Every name of source.ts is part of env's surface (the same ones prepare.ts imports).
export * from "./workspace/source.js";
