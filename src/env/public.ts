/**
 * `skillsmith/env`: where agents and verifiers run. Sandboxes behind one interface
 * (`SandboxV1`: bubblewrap, containers through the Docker Engine API, an explicit unsafe
 * pass-through) and the registry to add your own (`registerSandbox`); repositories prepared at
 * a pinned commit and materialised per run; verifiers run and checked; the run flags and how
 * each changes a verdict.
 *
 * @packageDocumentation
 */
export {
  BubblewrapSandbox,
  type BubblewrapSandboxOptions,
} from "./sandbox/bubblewrap.js";
export { ContainerSandbox, type ContainerSandboxOptions } from "./sandbox/container.js";
export { SandboxUnavailableError } from "./sandbox/errors.js";
// Experimental (see the README): the registry.
// The registry module is public as a whole: every name it exports belongs to the API.
export * from "./sandbox/factory.js";
export type * from "./sandbox/types.js";
export { UnsafeSandbox } from "./sandbox/unsafe.js";
export { type DetectSetupOptions, detectSetup, type SetupPlan } from "./setup/detect.js";
export {
  type FlagDefinition,
  type FlagEffect,
  flagDefinition,
  type PairMeasurement,
  pairMeasurement,
  RUN_FLAGS,
  type RunFlag,
} from "./verifier/flags.js";
export { type RunVerifierOptions, runVerifier } from "./verifier/run.js";
export type {
  CheckResult,
  CheckStatus,
  VerifierResult,
  VerifierSpec,
} from "./verifier/types.js";
export {
  type ValidateVerifierOptions,
  type VerifierValidation,
  validateVerifier,
} from "./verifier/validate.js";
export { defaultCacheDir } from "./workspace/cache.js";
export { treeDigest } from "./workspace/digest.js";
export {
  type MaterialiseOptions,
  materialiseWorkspace,
  type Workspace,
} from "./workspace/materialise.js";
export { type PrepareBaseOptions, type PreparedBase, prepareBase } from "./workspace/prepare.js";
export { parseRepositorySource, type RepositorySource } from "./workspace/source.js";
