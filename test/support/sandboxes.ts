import { BubblewrapSandbox } from "../../src/env/sandbox/bubblewrap.js";
import { ContainerSandbox, DEFAULT_BASE_IMAGE } from "../../src/env/sandbox/container.js";
import type { ResourceLimits, SandboxV1 } from "../../src/env/sandbox/types.js";

/**
 * The container sandbox when a Docker/Podman API socket answers and skillsmith's base image
 * (python3, pytest, node; built by scripts/ci-containers.sh) exists; undefined otherwise, so
 * tests can `skipIf` naming what is missing.
 */
export async function availableContainerSandbox(): Promise<ContainerSandbox | undefined> {
  try {
    const sandbox = await ContainerSandbox.connect();
    return (await sandbox.imageId(DEFAULT_BASE_IMAGE)) === undefined ? undefined : sandbox;
  } catch {
    return undefined;
  }
}

/** The bubblewrap sandbox when its probe succeeds on this machine; undefined otherwise. */
export async function usableBubblewrap(): Promise<BubblewrapSandbox | undefined> {
  try {
    const sandbox = new BubblewrapSandbox();
    await sandbox.probe();
    return sandbox;
  } catch {
    return undefined;
  }
}

/**
 * Whether a memory cap binds a whole process tree (an agent CLI and its children): that needs
 * cgroups; the prlimit fallback limits each process on its own (RLIMIT_DATA), so a tree of
 * processes can exceed the cap together.
 */
export function capsProcessTrees(sandbox: BubblewrapSandbox | undefined): boolean {
  return sandbox !== undefined && sandbox.limitEnforcement().mechanism !== "prlimit";
}

/** A real sandbox that also notes the limits of every exec it is asked for. */
export function recordingLimits(sandbox: SandboxV1): {
  sandbox: SandboxV1;
  limits: ResourceLimits[];
} {
  const limits: ResourceLimits[] = [];
  return {
    limits,
    sandbox: {
      specificationVersion: "v1",
      kind: sandbox.kind,
      exec: (request) => {
        limits.push(request.limits);
        return sandbox.exec(request);
      },
    },
  };
}

/**
 * `sandbox` inside a test that is skipped without it: the value, or an error naming what is
 * missing (so the option type needs no `| undefined`).
 */
export function present<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`${what} is not available; this test should be skipped`);
  return value;
}

/** Whether `python3 -m pytest` runs here (probed once per run: tool-probes.ts). */
export { hasPytest } from "./tool-probes.js";
