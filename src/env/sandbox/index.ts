/**
 * The sandbox layer's barrel for code inside skillsmith (`env/index.ts`, the wiki gates, tests):
 * it exports internals too (cgroup layout, bubblewrap's path rules, image building). The
 * package's public `skillsmith/env` entry is `env/public.ts` (package.json "exports"), which
 * picks the stable subset; both re-export the registry module whole, so its list lives once.
 */
export {
  BubblewrapSandbox,
  type BubblewrapSandboxOptions,
  bubblewrapMissingError,
  ETC_ALLOWLIST,
  SYSTEM_FOLDERS,
  sandboxPath,
} from "./bubblewrap.js";
export { type CgroupLayout, detectCgroupLayout } from "./cgroup.js";
export {
  type BuildBaseImageOptions,
  buildBaseImage,
  ContainerSandbox,
  type ContainerSandboxOptions,
  candidateEndpoints,
  connectDocker,
  DEFAULT_BASE_IMAGE,
  type DockerConnection,
  SANDBOX_LABEL,
} from "./container.js";
export { environmentKey, generateDockerfile } from "./dockerfile.js";
export { SandboxUnavailableError } from "./errors.js";
// The registry module is public as a whole: every name it exports belongs to the API.
export * from "./factory.js";
export {
  type CredentialProxy,
  type CredentialProxyOptions,
  startCredentialProxy,
} from "./loopback.js";
export {
  type BaseImageMap,
  buildTaskImage,
  copyFolderFromImage,
  DEFAULT_BUILD_TIMEOUT_SECONDS,
  externalImages,
  mapBaseImages,
  parseBaseImageMap,
  type TaskImage,
  type TaskImageRequest,
} from "./task-image.js";
export type * from "./types.js";
export { DEFAULT_SANDBOX_LIMITS, withDefaultLimits } from "./types.js";
export { environmentWithoutCredentials, UnsafeSandbox } from "./unsafe.js";
