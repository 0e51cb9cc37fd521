/**
 * One command in a fresh workspace of a prepared base, with the base's runtime and no network:
 * what an agent's or a verifier's run sees of the environment. The environment tests ask it
 * whether what setup prepared (imports, caches, installs) serves a run offline.
 */
import type { SandboxV1 } from "../../src/env/sandbox/types.js";
import { withPreparedRuntime } from "../../src/env/setup/runtime.js";
import { materialiseWorkspace } from "../../src/env/workspace/materialise.js";
import type { PreparedBase } from "../../src/env/workspace/prepare.js";

export interface OfflineRunOptions {
  /** Changes the workspace before the command runs (an agent's edit). */
  readonly edit?: (workspace: string) => Promise<void>;
  readonly timeoutMs?: number;
  /** The image to run in (container sandboxes); by default the sandbox's own. */
  readonly image?: string;
}

export async function runOffline(
  sandbox: SandboxV1,
  base: PreparedBase,
  command: string,
  options: OfflineRunOptions = {},
) {
  const workspace = await materialiseWorkspace(base);
  try {
    await options.edit?.(workspace.path);
    return await withPreparedRuntime(sandbox, base.runtime).exec({
      command: ["sh", "-c", command],
      workspace: workspace.path,
      workspaceMountPath: workspace.mountPath,
      network: "none",
      limits: { timeoutMs: options.timeoutMs ?? 60_000 },
      ...(options.image === undefined ? {} : { image: options.image }),
    });
  } finally {
    await workspace.dispose();
  }
}
