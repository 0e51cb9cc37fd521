import { existsSync } from "node:fs";
import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { InfrastructureError } from "../core/errors.js";
import { packageRoot } from "../core/paths.js";
import { AgentCliMissingError, findAgentCli, sandboxedCli } from "./cli-locate.js";

describe("agent CLI location", () => {
  it("says how to install the pinned version when a CLI is missing", () => {
    const claude = new AgentCliMissingError("claude");
    expect(claude).toBeInstanceOf(InfrastructureError);
    expect(claude.code).toBe("agent-cli-missing");
    expect(claude.message).toContain("npm install -g @anthropic-ai/claude-code@2.1.328");
    expect(new AgentCliMissingError("codex").message).toContain(
      "npm install -g @openai/codex@0.169.0",
    );
  });

  const pinned = join(packageRoot(), "node_modules", ".bin", "claude");
  it.skipIf(!existsSync(pinned))("prefers skillsmith's own node_modules/.bin", async () => {
    expect(await findAgentCli("claude")).toBe(pinned);
  });
});

describe("sandboxedCli", () => {
  it("resolves a node_modules/.bin link and mounts the node_modules folder that holds it", async () => {
    const root = await mkdtemp(join(tmpdir(), "skillsmith-cli-"));
    try {
      const packageBin = join(root, "node_modules", "tool-package", "bin");
      await mkdir(packageBin, { recursive: true });
      await writeFile(join(packageBin, "tool.js"), "#!/bin/sh\n");
      await mkdir(join(root, "node_modules", ".bin"));
      await symlink("../tool-package/bin/tool.js", join(root, "node_modules", ".bin", "tool"));
      const cli = await sandboxedCli(join(root, "node_modules", ".bin", "tool"));
      const real = await realpath(root);
      expect(cli.program).toBe(join(real, "node_modules", "tool-package", "bin", "tool.js"));
      expect(cli.mounts).toEqual([
        {
          hostPath: join(real, "node_modules"),
          sandboxPath: join(real, "node_modules"),
          readOnly: true,
        },
      ]);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});
