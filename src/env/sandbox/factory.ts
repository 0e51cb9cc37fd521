/**
 * Sandboxes by kind: a registry, not a switch, so a user can add a backend of their own
 * (`registerSandbox("firecracker", factory)`) and run a suite in it (`runSuite({ sandbox:
 * "firecracker" })`). The built-in backends are registered the same way; each loads its module
 * only when a sandbox of its kind is created (dockerode, for one, costs start-up time).
 */
import { UsageError } from "../../core/errors.js";
import type { BubblewrapSandboxOptions } from "./bubblewrap.js";
import type { ContainerSandboxOptions } from "./container.js";
import type { SandboxV1 } from "./types.js";

export const BUILTIN_SANDBOX_KINDS = ["local", "container", "unsafe"] as const;
export type BuiltinSandboxKind = (typeof BUILTIN_SANDBOX_KINDS)[number];
/** A registered sandbox kind: a built-in one or a user's (`registerSandbox`). */
export type SandboxKind = BuiltinSandboxKind | (string & {});

export type CreateSandboxOptions =
  | ({ readonly kind: "local" } & BubblewrapSandboxOptions)
  | ({ readonly kind: "container"; readonly env?: NodeJS.ProcessEnv } & Partial<
      Omit<ContainerSandboxOptions, "docker">
    > &
      Pick<Partial<ContainerSandboxOptions>, "docker">)
  | { readonly kind: "unsafe" };

/** What `createSandbox` passes to a registered factory: the kind and the caller's options. */
export interface RegisteredSandboxOptions {
  readonly kind: string;
  readonly [option: string]: unknown;
}

/**
 * Builds a sandbox, checked to work on this machine: when the backend is unavailable it throws
 * (a `SandboxUnavailableError` saying how to install it), never returns a weaker sandbox. The
 * sandbox's `kind` should be the registered kind (it is recorded in run manifests and names the
 * sandbox queue workers create). Every kind but `unsafe` must honour `workspaceMountPath` and
 * `extraMounts` (the verifier is mounted outside the workspace).
 *
 * @experimental
 */
export type SandboxFactory = (options: RegisteredSandboxOptions) => SandboxV1 | Promise<SandboxV1>;

/** Same rule as suite ids: a kind is written on command lines and in run manifests. */
const KIND_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

const factories = new Map<string, SandboxFactory>();

/**
 * Register a sandbox backend under `kind`. A kind already registered is refused unless
 * `replace` is set.
 *
 * @experimental
 */
export function registerSandbox(
  kind: string,
  factory: SandboxFactory,
  options: { readonly replace?: boolean } = {},
): void {
  if (typeof kind !== "string" || !KIND_PATTERN.test(kind)) {
    throw new UsageError(
      "env.sandbox-kind-invalid",
      `sandbox kind ${JSON.stringify(kind)} is not valid: use letters, digits, '.', '_' or '-', starting with a letter or digit (at most 128 characters)`,
    );
  }
  if (typeof factory !== "function") {
    throw new UsageError(
      "env.sandbox-factory-invalid",
      `registerSandbox("${kind}", factory): the factory must be a function returning a sandbox`,
    );
  }
  if (factories.has(kind) && options.replace !== true) {
    throw new UsageError(
      "env.sandbox-kind-taken",
      `a sandbox of kind "${kind}" is already registered; pass { replace: true } to replace it`,
    );
  }
  factories.set(kind, factory);
}

/**
 * Remove a sandbox kind registered by `registerSandbox`; true when there was one. Built-in kinds
 * cannot be removed.
 *
 * @experimental
 */
export function unregisterSandbox(kind: string): boolean {
  if ((BUILTIN_SANDBOX_KINDS as readonly string[]).includes(kind)) {
    throw new UsageError(
      "env.sandbox-builtin",
      `the built-in sandbox "${kind}" cannot be unregistered; register a replacement with { replace: true }`,
    );
  }
  return factories.delete(kind);
}

/** Every registered sandbox kind: the built-ins first, then the others in registration order. */
export function sandboxKinds(): string[] {
  return [...factories.keys()];
}

export function isSandboxKind(kind: string): boolean {
  return factories.has(kind);
}

/**
 * The sandbox a caller asked for, checked to work on this machine. Never downgrades: when the
 * backend is unavailable it throws `SandboxUnavailableError` whose message says how to install
 * it and that `--unsafe-no-sandbox` (kind `unsafe`) is the explicit way to run unisolated.
 */
export async function createSandbox(options: CreateSandboxOptions): Promise<SandboxV1>;
export async function createSandbox(options: RegisteredSandboxOptions): Promise<SandboxV1>;
export async function createSandbox(
  options: CreateSandboxOptions | RegisteredSandboxOptions,
): Promise<SandboxV1> {
  const factory = factories.get(options.kind);
  if (factory === undefined) {
    throw new UsageError(
      "env.sandbox-unknown",
      `unknown sandbox kind "${options.kind}"; expected one of: ${sandboxKinds().join(", ")} (or register one with registerSandbox)`,
    );
  }
  const sandbox = await factory(options as RegisteredSandboxOptions);
  if (
    typeof sandbox !== "object" ||
    sandbox === null ||
    sandbox.specificationVersion !== "v1" ||
    typeof sandbox.exec !== "function"
  ) {
    throw new UsageError(
      "env.sandbox-factory-invalid",
      `the factory registered for sandbox kind "${options.kind}" did not return a SandboxV1 (specificationVersion "v1" and an exec method)`,
    );
  }
  return sandbox;
}

registerSandbox("local", async (options) => {
  const { kind: _kind, ...rest } = options as { kind: "local" } & BubblewrapSandboxOptions;
  const { BubblewrapSandbox } = await import("./bubblewrap.js");
  const sandbox = new BubblewrapSandbox(rest);
  await sandbox.probe();
  return sandbox;
});
registerSandbox("container", async (options) => {
  const {
    kind: _kind,
    docker,
    env,
    ...rest
  } = options as Extract<CreateSandboxOptions, { kind: "container" }>;
  const { ContainerSandbox } = await import("./container.js");
  if (docker !== undefined) return new ContainerSandbox({ ...rest, docker });
  return ContainerSandbox.connect({ ...rest, ...(env === undefined ? {} : { env }) });
});
registerSandbox("unsafe", async () => {
  const { UnsafeSandbox } = await import("./unsafe.js");
  return new UnsafeSandbox();
});
