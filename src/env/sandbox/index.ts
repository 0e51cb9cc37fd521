export {
  BubblewrapSandbox,
  type BubblewrapSandboxOptions,
  bubblewrapMissingError,
  type LimitEnforcement,
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
export {
  BUILTIN_SANDBOX_KINDS,
  type BuiltinSandboxKind,
  type CreateSandboxOptions,
  createSandbox,
  isSandboxKind,
  type RegisteredSandboxOptions,
  registerSandbox,
  type SandboxFactory,
  type SandboxKind,
  sandboxKinds,
  unregisterSandbox,
} from "./factory.js";
export type * from "./types.js";
export { UnsafeSandbox } from "./unsafe.js";
