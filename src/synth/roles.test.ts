import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { resolveRoleModels } from "./roles.js";

describe("a model per synthesis role", () => {
  it("takes each role's flag, else its variable, else the config, else --model", async () => {
    const cwd = await mkdtemp(join(tmpdir(), "synth-roles-"));
    try {
      await writeFile(
        join(cwd, "skillsmith.config.json"),
        JSON.stringify({ synthModels: { critic: "openai:from-config", solver: "openai:ignored" } }),
      );
      const choices = resolveRoleModels({ solver: "anthropic:small" }, "anthropic:default", {
        cwd,
        env: { SKILLSMITH_SYNTH_MODEL: "anthropic:large" },
      });
      expect(choices).toEqual({
        solver: { spec: "anthropic:small", from: "flag" },
        synthesiser: { spec: "anthropic:large", from: "environment" },
        critic: { spec: "openai:from-config", from: "config" },
        editor: { spec: "anthropic:default", from: "default" },
      });
    } finally {
      await rm(cwd, { recursive: true, force: true });
    }
  });

  it("refuses a misspelt role in the config, naming the file", async () => {
    const cwd = await mkdtemp(join(tmpdir(), "synth-roles-"));
    try {
      await writeFile(
        join(cwd, "skillsmith.config.json"),
        JSON.stringify({ synthModels: { synthesizer: "openai:x" } }),
      );
      expect(() => resolveRoleModels({}, "anthropic:default", { cwd, env: {} })).toThrow(
        /skillsmith\.config\.json/,
      );
    } finally {
      await rm(cwd, { recursive: true, force: true });
    }
  });
});
