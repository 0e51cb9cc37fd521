import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { InfrastructureError } from "../core/errors.js";
import { packageRoot } from "../core/paths.js";
import { AgentCliMissingError, findAgentCli } from "./cli-locate.js";

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
