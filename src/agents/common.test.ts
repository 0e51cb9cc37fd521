import { describe, expect, it } from "vitest";
import { looksLikeEndpointFailure, modelIdFromSpec } from "./common.js";

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
