import { mkdtemp, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { InputError } from "../core/errors.js";
import type { SandboxV1 } from "../env/sandbox/types.js";
import {
  agentResourceLimits,
  armOf,
  looksLikeEndpointFailure,
  modelIdFromSpec,
  pricedUsage,
  requestedSkillPaths,
  requireWorkspace,
} from "./common.js";
import type { AgentRunRequest } from "./types.js";

function request(overrides: Partial<AgentRunRequest>): AgentRunRequest {
  return {
    task: "t",
    workspace: "/w",
    model: { spec: "m" },
    limits: { timeoutMs: 1_000 },
    // Never called: these helpers only read the request.
    sandbox: {} as SandboxV1,
    ...overrides,
  };
}

describe("requested skill folders", () => {
  it("takes skillPaths over skillPath, and skillPath alone as a list of one", () => {
    expect(requestedSkillPaths(request({}))).toEqual([]);
    expect(requestedSkillPaths(request({ skillPath: "/s/a" }))).toEqual(["/s/a"]);
    expect(
      requestedSkillPaths(request({ skillPath: "/s/a", skillPaths: ["/s/b", "/s/c"] })),
    ).toEqual(["/s/b", "/s/c"]);
  });

  it("derives the arm from whether any skill is requested", () => {
    expect(armOf(request({}))).toBe("without-skill");
    expect(armOf(request({ skillPaths: ["/s/b"] }))).toBe("with-skill");
    expect(armOf(request({ skillPath: "/s/a", skillPaths: [] }))).toBe("without-skill");
    expect(armOf(request({ skillPaths: ["/s/b"], arm: "with" }))).toBe("with");
  });
});

describe("agentResourceLimits", () => {
  it("passes memory and CPU caps on only when set", () => {
    expect(agentResourceLimits({ timeoutMs: 5, maxTurns: 3, budgetUsd: 1 })).toEqual({
      timeoutMs: 5,
    });
    expect(agentResourceLimits({ timeoutMs: 5, memoryBytes: 1024, cpus: 0.5 })).toEqual({
      timeoutMs: 5,
      memoryBytes: 1024,
      cpus: 0.5,
    });
  });
});

describe("modelIdFromSpec", () => {
  it("strips a provider prefix and a compatible endpoint's base URL", () => {
    expect(modelIdFromSpec("anthropic:claude-haiku-4-5")).toBe("claude-haiku-4-5");
    expect(modelIdFromSpec("openai:gpt-5")).toBe("gpt-5");
    expect(modelIdFromSpec("openai-compatible:qwen3:8b@http://127.0.0.1:11434/v1")).toBe(
      "qwen3:8b",
    );
  });

  it("keeps bare ids, including ones with a colon that is not a provider", () => {
    expect(modelIdFromSpec("claude-haiku-4-5")).toBe("claude-haiku-4-5");
    expect(modelIdFromSpec("qwen3:8b")).toBe("qwen3:8b");
  });
});

describe("looksLikeEndpointFailure", () => {
  it("recognises what the CLIs print for unreachable or failing endpoints", () => {
    expect(looksLikeEndpointFailure("API Error: Connection refused (ECONNREFUSED)")).toBe(true);
    expect(looksLikeEndpointFailure("API Error: 529 overloaded")).toBe(true);
    expect(
      looksLikeEndpointFailure(
        "Reconnecting... waiting for network (Connection failed: error sending request)",
      ),
    ).toBe(true);
    expect(looksLikeEndpointFailure("API Error: 400 prompt is too long")).toBe(false);
    expect(looksLikeEndpointFailure("the tests failed")).toBe(false);
  });
});

describe("pricedUsage", () => {
  const usage = { inputTokens: 2_000_000, cachedInputTokens: 1_000_000, outputTokens: 100_000 };

  it("prices tokens at the list price: gpt-5, $1.25 input, $0.125 cached, $10 output", () => {
    // 1M uncached · 1.25 + 1M cached · 0.125 + 0.1M · 10 = 1.25 + 0.125 + 1 = 2.375
    expect(pricedUsage(usage, "openai:gpt-5", "openai").costUsd).toBeCloseTo(2.375, 12);
    // A bare id and a dated or suffixed name take the same entry.
    expect(pricedUsage(usage, "gpt-5-codex", "openai").costUsd).toBeCloseTo(2.375, 12);
  });

  it("lets an override win, keeps a cost the agent reported, and leaves unknown models unpriced", () => {
    const override = { "openai:gpt-5": { input: 1, output: 1 } };
    // No cached price given: cached tokens at the input price, (2M + 0.1M) · $1 = 2.1
    expect(pricedUsage(usage, "openai:gpt-5", "openai", override).costUsd).toBeCloseTo(2.1, 12);
    expect(pricedUsage({ ...usage, costUsd: 0.5 }, "openai:gpt-5", "openai").costUsd).toBe(0.5);
    expect(pricedUsage(usage, "openai:local-model", "openai").costUsd).toBeUndefined();
  });
});

describe("requireWorkspace", () => {
  it("tells a missing workspace from one that cannot be read", async () => {
    const root = await mkdtemp(join(tmpdir(), "skillsmith-common-"));
    try {
      const looped = join(root, "looped");
      await symlink(looped, looped);
      // stat follows the link to itself and fails with ELOOP: there, but unreadable.
      const unreadable = await requireWorkspace(looped).catch((error) => error);
      expect(InputError.isInstance(unreadable)).toBe(true);
      expect((unreadable as InputError).code).toBe("core.file-unreadable");
      const missing = await requireWorkspace(join(root, "gone")).catch((error) => error);
      expect((missing as InputError).code).toBe("skill.workspace-not-directory");
      expect(await requireWorkspace(root)).toBe(root);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});
