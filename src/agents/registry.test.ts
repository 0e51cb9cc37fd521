import { describe, expect, it } from "vitest";
import { UsageError } from "../core/errors.js";
import {
  BUILTIN_HARNESS_NAMES,
  createHarness,
  harnessNames,
  isHarnessName,
  registerHarness,
  unregisterHarness,
} from "./registry.js";
import type { AgentHarnessV1, AgentRunRequest, OlderTrajectory } from "./types.js";

/** A harness of a user's own: records what it was built with and the requests it ran. */
function userHarness(name: string, built: unknown[]): (options: unknown) => AgentHarnessV1 {
  return (options) => {
    built.push(options);
    return {
      specificationVersion: "v1",
      name,
      // Written for an earlier skillsmith: `version: 1`, which the interface still takes.
      run: async (request: AgentRunRequest): Promise<OlderTrajectory> => ({
        version: 1,
        harness: name,
        events: [],
        skillsShown: [],
        skillsShownSource: "none",
        skillActivated: false,
        usage: { inputTokens: 0, cachedInputTokens: 0, outputTokens: 0 },
        wallTimeMs: 0,
        status: "completed",
        rawLog: request.task,
      }),
    };
  };
}

describe("the harness registry", () => {
  it("lists the built-in harnesses, registered the same way as a user's", () => {
    expect(harnessNames().slice(0, BUILTIN_HARNESS_NAMES.length)).toEqual([
      "claude-code",
      "codex",
      "builtin",
      "replay",
      "none",
      "oracle",
    ]);
    for (const name of BUILTIN_HARNESS_NAMES) expect(isHarnessName(name)).toBe(true);
    // The builtin agent is built on first run (its module loads the AI SDK), but it is there.
    expect(createHarness("builtin")).toMatchObject({ name: "builtin", specificationVersion: "v1" });
  });

  it("creates a registered harness by name, with the options given, until it is unregistered", async () => {
    const built: unknown[] = [];
    registerHarness("team-agent", userHarness("team-agent", built));
    try {
      expect(isHarnessName("team-agent")).toBe(true);
      expect(harnessNames()).toContain("team-agent");
      const harness = createHarness("team-agent", { flavour: "x" });
      expect(built).toEqual([{ flavour: "x" }]);
      const trajectory = await harness.run({ task: "say hi" } as AgentRunRequest);
      expect(trajectory).toMatchObject({ harness: "team-agent", rawLog: "say hi" });
    } finally {
      expect(unregisterHarness("team-agent")).toBe(true);
    }
    expect(isHarnessName("team-agent")).toBe(false);
    expect(() => createHarness("team-agent")).toThrow(/unknown agent harness "team-agent"/);
    expect(unregisterHarness("team-agent")).toBe(false);
  });

  it("refuses a taken name unless asked to replace, and never removes a built-in", () => {
    const built: unknown[] = [];
    registerHarness("twice", userHarness("first", built));
    try {
      expect(() => registerHarness("twice", userHarness("second", built))).toThrow(
        /already registered; pass \{ replace: true \}/,
      );
      expect(createHarness("twice").name).toBe("first");
      registerHarness("twice", userHarness("second", built), { replace: true });
      expect(createHarness("twice").name).toBe("second");
    } finally {
      unregisterHarness("twice");
    }
    expect(() => registerHarness("codex", userHarness("x", built))).toThrow(UsageError);
    expect(() => unregisterHarness("codex")).toThrow(/cannot be unregistered/);
    expect(createHarness("codex").name).toBe("codex");
  });

  it("refuses names a suite could not hold and factories that return no harness", () => {
    for (const bad of ["", "-agent", "has space", "a/b", "x".repeat(129)]) {
      expect(() => registerHarness(bad, userHarness("x", []))).toThrow(/is not valid/);
    }
    expect(() => registerHarness("no-factory", "nope" as never)).toThrow(/must be a function/);
    registerHarness("broken", () => ({ name: "broken" }) as never);
    try {
      expect(() => createHarness("broken")).toThrow(/did not return an AgentHarnessV1/);
    } finally {
      unregisterHarness("broken");
    }
  });
});
