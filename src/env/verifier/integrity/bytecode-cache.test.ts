import { mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { verifierBytecodeCache } from "./bytecode-cache.js";

const roots: string[] = [];
afterEach(async () => {
  for (const root of roots.splice(0)) await rm(root, { recursive: true, force: true });
});

async function root(): Promise<string> {
  const folder = await mkdtemp(join(tmpdir(), "bytecode-cache-"));
  roots.push(folder);
  return folder;
}

describe("verifierBytecodeCache", () => {
  it("gives the unsafe sandbox a folder of its own, never another kind's", async () => {
    const base = await root();
    const unsafe = await verifierBytecodeCache({ sandboxKind: "unsafe" }, base);
    const local = await verifierBytecodeCache({ sandboxKind: "local" }, base);
    expect(unsafe.startsWith(join(base, "verifier-bytecode"))).toBe(true);
    expect(unsafe).not.toBe(local);
  });

  it("keeps one folder per sandbox kind and image, writable by any user, sticky", async () => {
    const base = await root();
    const local = await verifierBytecodeCache({ sandboxKind: "local" }, base);
    const again = await verifierBytecodeCache({ sandboxKind: "local" }, base);
    const first = await verifierBytecodeCache(
      { sandboxKind: "container", image: "python:3.11" },
      base,
    );
    const second = await verifierBytecodeCache(
      { sandboxKind: "container", image: "python:3.12" },
      base,
    );
    expect(local).toBe(again);
    expect(new Set([local, first, second]).size).toBe(3);
    for (const folder of [local, first, second]) {
      if (folder === undefined) throw new Error("no folder");
      expect(folder.startsWith(join(base, "verifier-bytecode"))).toBe(true);
      expect((await stat(folder)).mode & 0o7777).toBe(0o1777);
    }
  });
});
