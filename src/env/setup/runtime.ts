import type { Mount, SandboxExecRequest, SandboxV1 } from "../sandbox/types.js";
import { SYSTEM_PATH } from "./detect.js";

/**
 * How runs use a prepared environment: a folder mounted read-only (when it lives on the host;
 * in a container image it is already inside), folders put first on PATH, and variables.
 */
export interface PreparedRuntime {
  /** The environment folder on the host and where sandboxes show it; absent inside an image. */
  readonly mount?: { readonly hostPath: string; readonly sandboxPath: string };
  readonly binPaths: readonly string[];
  readonly env: Readonly<Record<string, string>>;
}

/**
 * A sandbox whose every command runs in the prepared environment: its folder mounted read-only
 * (so no run can change what the next run starts from), its `bin` first on PATH followed by
 * system folders only (never the caller's PATH, which may start with an interpreter the sandbox
 * hides or that lacks what was installed), and its variables set. A request's own PATH is kept
 * after the environment's folders; its other variables win over the environment's.
 */
export function withPreparedRuntime(
  sandbox: SandboxV1,
  runtime: PreparedRuntime | undefined,
): SandboxV1 {
  if (runtime === undefined) return sandbox;
  return {
    specificationVersion: "v1",
    kind: sandbox.kind,
    exec: (request) => sandbox.exec(inPreparedRuntime(request, runtime, sandbox.kind)),
    // Preparing and disposing stay the wrapped sandbox's own business.
    ...(sandbox.prepare === undefined ? {} : { prepare: sandbox.prepare.bind(sandbox) }),
  };
}

/** The request with the environment's mount, PATH and variables added. */
export function inPreparedRuntime(
  request: SandboxExecRequest,
  runtime: PreparedRuntime,
  kind: SandboxV1["kind"] = "local",
): SandboxExecRequest {
  const mounts: Mount[] = [...(request.extraMounts ?? [])];
  // Without a mount namespace (the unsafe pass-through) the environment is used where it is.
  if (runtime.mount !== undefined && kind !== "unsafe") {
    mounts.push({
      hostPath: runtime.mount.hostPath,
      sandboxPath: runtime.mount.sandboxPath,
      readOnly: true,
    });
  }
  const path = [...runtime.binPaths, request.env?.PATH ?? SYSTEM_PATH]
    .filter((part) => part !== "")
    .join(":");
  return {
    ...request,
    env: { ...runtime.env, ...request.env, PATH: path },
    ...(mounts.length === 0 ? {} : { extraMounts: mounts }),
  };
}
