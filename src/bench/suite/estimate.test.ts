import { describe, expect, it } from "vitest";
import { estimateSuiteCost, renderSuiteEstimate } from "./estimate.js";
import type { Suite } from "./types.js";

function suiteOf(configurations: Suite["configurations"], requirements: number[]): Suite {
  return {
    root: "/suite",
    format: "skillsmith-suite/1",
    name: "s",
    configurations,
    skills: requirements.map((count, index) => ({
      id: `skill${index}`,
      requirements: Array.from({ length: count }, (_, item) => ({ id: `batch${item + 1}` })),
    })),
    warnings: [],
  } as unknown as Suite;
}

const limits = { timeoutSeconds: 60 };

describe("estimateSuiteCost", () => {
  it("prices every run of every configuration at the model's list price", () => {
    const suite = suiteOf(
      [{ id: "haiku", agent: "claude-code", model: "anthropic:claude-haiku-4-5", limits }],
      [10, 3],
    );
    const estimate = estimateSuiteCost(suite);
    // 13 requirements × 2 arms; Haiku 4.5 at $1 in / $5 out per million tokens:
    // 150,000 × 1 + 8,000 × 5 = 190,000 micro-dollars = $0.19 a run.
    expect(estimate.runs).toBe(26);
    expect(estimate.configurations[0]?.usdPerRun).toBeCloseTo(0.19, 12);
    expect(estimate.usd).toBeCloseTo(26 * 0.19, 9);
    expect(renderSuiteEstimate(estimate)[0]).toMatch(/26 agent runs, \$4\.94/);
  });

  it("takes repeats from the suite's protocol, and the command line over it", () => {
    const suite = {
      ...suiteOf(
        [{ id: "c", agent: "claude-code", model: "anthropic:claude-haiku-4-5", limits }],
        [1],
      ),
      protocol: { repeats: 3 },
    } as Suite;
    expect(estimateSuiteCost(suite).runs).toBe(6);
    expect(estimateSuiteCost(suite, { repeats: 1 }).runs).toBe(2);
  });

  it("says unknown for a model without a price instead of guessing, and keeps the known part", () => {
    const suite = suiteOf(
      [
        { id: "kimi", agent: "codex", model: "openai:kimi-k2.6", limits },
        { id: "mini", agent: "codex", model: "openai:gpt-5-mini", limits },
      ],
      [1],
    );
    const estimate = estimateSuiteCost(suite);
    expect(estimate.usd).toBeNull();
    expect(estimate.configurations[0]?.unknown).toMatch(
      /no price for openai:kimi-k2\.6: add it to model\.prices/,
    );
    // gpt-5-mini: $0.25 in / $2 out → 0.0375 + 0.016 = $0.0535 a run, 2 runs.
    expect(estimate.knownUsd).toBeCloseTo(2 * 0.0535, 12);
    expect(renderSuiteEstimate(estimate)[0]).toMatch(/at least \$0\.11/);
    // A price override makes it known.
    const priced = estimateSuiteCost(suite, { prices: { "kimi-k2.6": { input: 1, output: 4 } } });
    expect(priced.usd).toBeCloseTo(2 * (0.15 + 0.032) + 2 * 0.0535, 12);
  });

  it("costs nothing for a harness that talks to no model, and the harness's default model otherwise", () => {
    const suite = suiteOf([{ id: "c", agent: "claude-code", limits }], [2]);
    expect(estimateSuiteCost(suite, { agentOverride: "replay" }).usd).toBe(0);
    // claude-code's registered default (Sonnet 4.5: $3 / $15): 0.45 + 0.12 = $0.57 a run.
    expect(estimateSuiteCost(suite).configurations[0]?.usdPerRun).toBeCloseTo(0.57, 12);
  });
});
