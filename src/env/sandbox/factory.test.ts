import { describe, expect, it } from "vitest";
import {
  createSandbox,
  isSandboxKind,
  registerSandbox,
  sandboxKinds,
  unregisterSandbox,
} from "./factory.js";
import type { SandboxExecRequest, SandboxV1 } from "./types.js";
import { UnsafeSandbox } from "./unsafe.js";

describe("the sandbox registry", () => {
  it("has the built-in kinds and creates the unsafe one by name", async () => {
    expect(sandboxKinds().slice(0, 3)).toEqual(["local", "container", "unsafe"]);
    const sandbox = await createSandbox({ kind: "unsafe" });
    expect(sandbox).toBeInstanceOf(UnsafeSandbox);
    expect(sandbox.kind).toBe("unsafe");
  });

  it("creates a user's sandbox with the caller's options, and forgets it when unregistered", async () => {
    const seen: unknown[] = [];
    const commands: string[][] = [];
    registerSandbox("recording", (options) => {
      seen.push(options);
      const inner = new UnsafeSandbox();
      const sandbox: SandboxV1 = {
        specificationVersion: "v1",
        kind: "recording",
        exec: (request: SandboxExecRequest) => {
          commands.push([...request.command]);
          return inner.exec(request);
        },
      };
      return sandbox;
    });
    try {
      expect(isSandboxKind("recording")).toBe(true);
      const sandbox = await createSandbox({ kind: "recording", label: "x" });
      expect(seen).toEqual([{ kind: "recording", label: "x" }]);
      const result = await sandbox.exec({
        command: ["sh", "-c", "echo hello"],
        workspace: process.cwd(),
        workspaceMountPath: process.cwd(),
        network: "none",
        limits: { timeoutMs: 10_000 },
      });
      expect(result.stdout).toBe("hello\n");
      expect(commands).toEqual([["sh", "-c", "echo hello"]]);
      expect(() => registerSandbox("recording", () => sandbox)).toThrow(/already registered/);
    } finally {
      expect(unregisterSandbox("recording")).toBe(true);
    }
    await expect(createSandbox({ kind: "recording" })).rejects.toThrow(
      /unknown sandbox kind "recording"; expected one of: local, container, unsafe/,
    );
  });

  it("refuses bad kinds, removing a built-in and factories that return no sandbox", async () => {
    expect(() => registerSandbox("a b", () => new UnsafeSandbox())).toThrow(/is not valid/);
    expect(() => unregisterSandbox("local")).toThrow(/cannot be unregistered/);
    registerSandbox("hollow", () => ({ kind: "hollow" }) as never);
    try {
      await expect(createSandbox({ kind: "hollow" })).rejects.toThrow(/did not return a SandboxV1/);
    } finally {
      unregisterSandbox("hollow");
    }
  });
});
