import { describe, expect, it } from "vitest";
import type { SandboxExecRequest, SandboxExecResult, SandboxV1 } from "../sandbox/types.js";
import { SYSTEM_PATH } from "./detect.js";
import { inPreparedRuntime, type PreparedRuntime, withPreparedRuntime } from "./runtime.js";

const runtime: PreparedRuntime = {
  mount: { hostPath: "/cache/bases/x/env", sandboxPath: "/skillsmith-env" },
  binPaths: ["/skillsmith-env/bin"],
  env: { VIRTUAL_ENV: "/skillsmith-env", PIP_NO_INDEX: "1" },
};

const request: SandboxExecRequest = {
  command: ["python", "-V"],
  workspace: "/host/ws",
  workspaceMountPath: "/workspace/repo",
  network: "none",
  limits: { timeoutMs: 1000 },
};

describe("inPreparedRuntime", () => {
  it("mounts the environment read-only and puts its bin before system folders only", () => {
    const prepared = inPreparedRuntime(request, runtime);
    expect(prepared.extraMounts).toEqual([
      { hostPath: "/cache/bases/x/env", sandboxPath: "/skillsmith-env", readOnly: true },
    ]);
    // Never the caller's PATH (pyenv's shims under /root come first there on these machines).
    expect(prepared.env?.PATH).toBe(`/skillsmith-env/bin:${SYSTEM_PATH}`);
    expect(prepared.env?.VIRTUAL_ENV).toBe("/skillsmith-env");
  });

  it("keeps a request's own PATH after the environment and lets its variables win", () => {
    const prepared = inPreparedRuntime(
      {
        ...request,
        env: { PATH: "/opt/agent/bin:/usr/bin", PIP_NO_INDEX: "0" },
        extraMounts: [{ hostPath: "/a", sandboxPath: "/a", readOnly: false }],
      },
      runtime,
    );
    expect(prepared.env?.PATH).toBe("/skillsmith-env/bin:/opt/agent/bin:/usr/bin");
    expect(prepared.env?.PIP_NO_INDEX).toBe("0");
    expect(prepared.extraMounts?.map((mount) => mount.sandboxPath)).toEqual([
      "/a",
      "/skillsmith-env",
    ]);
  });

  it("adds no mount for the unsafe pass-through, which has no mount namespace", () => {
    expect(inPreparedRuntime(request, runtime, "unsafe").extraMounts).toBeUndefined();
  });
});

describe("withPreparedRuntime", () => {
  it("passes every exec through the environment and leaves a sandbox without one alone", async () => {
    const seen: SandboxExecRequest[] = [];
    const inner: SandboxV1 = {
      specificationVersion: "v1",
      kind: "local",
      exec: async (sent): Promise<SandboxExecResult> => {
        seen.push(sent);
        return {
          exitCode: 0,
          stdout: "",
          stderr: "",
          timedOut: false,
          oomKilled: false,
          durationMs: 1,
        };
      },
    };
    expect(withPreparedRuntime(inner, undefined)).toBe(inner);
    await withPreparedRuntime(inner, runtime).exec(request);
    expect(seen[0]?.extraMounts?.[0]?.readOnly).toBe(true);
    expect(seen[0]?.env?.PATH?.startsWith("/skillsmith-env/bin:")).toBe(true);
  });
});
