import { existsSync, readFileSync } from "node:fs";
import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { InfrastructureError } from "../core/errors.js";
import { packageRoot } from "../core/paths.js";
import {
  AGENT_CLIS,
  AgentCliMissingError,
  agentCliCacheDirectory,
  agentCliCachePrefix,
  findAgentCli,
  sandboxedCli,
} from "./cli-locate.js";

describe("agent CLI location", () => {
  it("says how to install the pinned version when a CLI is missing", () => {
    const claude = new AgentCliMissingError("claude");
    expect(claude).toBeInstanceOf(InfrastructureError);
    expect(claude.code).toBe("agents.agent-cli-missing");
    expect(claude.message).toContain("npm install -g @anthropic-ai/claude-code@2.1.328");
    expect(new AgentCliMissingError("codex").message).toContain(
      "npm install -g @openai/codex@0.169.0",
    );
  });

  it("names the cache folder and the clone's install command in the missing-CLI message", () => {
    const message = new AgentCliMissingError("codex").message;
    expect(message).toContain(agentCliCacheDirectory());
    expect(message).toContain("npm run agent-clis");
    const manifest = JSON.parse(readFileSync(join(packageRoot(), "package.json"), "utf8")) as {
      scripts: Record<string, string>;
    };
    // The command the message names exists, and the test command installs the CLIs first.
    expect(manifest.scripts["agent-clis"]).toMatch(/scripts\/agent-clis\.mjs/);
    expect(manifest.scripts.pretest).toMatch(/scripts\/agent-clis\.mjs/);
  });

  it("keeps the 760 MB agent CLIs out of every dependency list a clone or user installs", () => {
    const manifest = JSON.parse(
      readFileSync(join(packageRoot(), "package.json"), "utf8"),
    ) as Record<string, Record<string, string> | undefined>;
    for (const field of ["dependencies", "devDependencies", "optionalDependencies"]) {
      for (const { packageName } of Object.values(AGENT_CLIS)) {
        expect(manifest[field]?.[packageName], `${field} ${packageName}`).toBeUndefined();
      }
    }
  });

  it("puts each pinned CLI in its own prefix under the cache folder, which the environment moves", () => {
    expect(agentCliCacheDirectory({ SKILLSMITH_AGENT_CLI_DIR: "/opt/clis" })).toBe("/opt/clis");
    expect(agentCliCacheDirectory({ XDG_CACHE_HOME: "/var/cache/me" })).toBe(
      "/var/cache/me/skillsmith/agent-clis",
    );
    expect(agentCliCachePrefix("claude", { SKILLSMITH_AGENT_CLI_DIR: "/opt/clis" })).toBe(
      `/opt/clis/@anthropic-ai+claude-code@${AGENT_CLIS.claude.version}`,
    );
  });

  const pinned = join(packageRoot(), "node_modules", ".bin", "claude");
  it.skipIf(!existsSync(pinned))("prefers skillsmith's own node_modules/.bin", async () => {
    expect(await findAgentCli("claude")).toBe(pinned);
  });
});

describe("sandboxedCli", () => {
  it("resolves a node_modules/.bin link and mounts only the CLI's package and its platform packages", async () => {
    const root = await mkdtemp(join(tmpdir(), "skillsmith-cli-"));
    try {
      const scope = join(root, "node_modules", "@vendor");
      await mkdir(join(scope, "tool", "bin"), { recursive: true });
      await mkdir(join(scope, "tool-linux-x64"), { recursive: true });
      // Neither a package of another name in the scope nor any other package is shown.
      await mkdir(join(scope, "other"), { recursive: true });
      await mkdir(join(root, "node_modules", "unrelated"), { recursive: true });
      await writeFile(join(scope, "tool", "bin", "tool.js"), "#!/bin/sh\n");
      await mkdir(join(root, "node_modules", ".bin"));
      await symlink("../@vendor/tool/bin/tool.js", join(root, "node_modules", ".bin", "tool"));
      const cli = await sandboxedCli(join(root, "node_modules", ".bin", "tool"));
      const real = await realpath(root);
      expect(cli.program).toBe(join(real, "node_modules", "@vendor", "tool", "bin", "tool.js"));
      const mounted = (folder: string) => ({
        hostPath: folder,
        sandboxPath: folder,
        readOnly: true,
      });
      expect(cli.mounts).toEqual([
        mounted(join(real, "node_modules", "@vendor", "tool")),
        mounted(join(real, "node_modules", "@vendor", "tool-linux-x64")),
      ]);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});
