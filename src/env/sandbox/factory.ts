import { BubblewrapSandbox, type BubblewrapSandboxOptions } from "./bubblewrap.js";
import { ContainerSandbox, type ContainerSandboxOptions } from "./container.js";
import type { SandboxV1 } from "./types.js";
import { UnsafeSandbox } from "./unsafe.js";

export type CreateSandboxOptions =
  | ({ readonly kind: "local" } & BubblewrapSandboxOptions)
  | ({ readonly kind: "container"; readonly env?: NodeJS.ProcessEnv } & Partial<
      Omit<ContainerSandboxOptions, "docker">
    > &
      Pick<Partial<ContainerSandboxOptions>, "docker">)
  | { readonly kind: "unsafe" };

/**
 * The sandbox a caller asked for, checked to work on this machine. Never downgrades: when the
 * backend is unavailable it throws `SandboxUnavailableError` whose message says how to install
 * it and that `--unsafe-no-sandbox` (kind `unsafe`) is the explicit way to run unisolated.
 */
export async function createSandbox(options: CreateSandboxOptions): Promise<SandboxV1> {
  switch (options.kind) {
    case "local": {
      const { kind: _kind, ...rest } = options;
      const sandbox = new BubblewrapSandbox(rest);
      await sandbox.probe();
      return sandbox;
    }
    case "container": {
      const { kind: _kind, docker, env, ...rest } = options;
      if (docker !== undefined) return new ContainerSandbox({ ...rest, docker });
      return ContainerSandbox.connect({ ...rest, ...(env === undefined ? {} : { env }) });
    }
    case "unsafe":
      return new UnsafeSandbox();
  }
}
