import { describe, expect, it } from "vitest";
import {
  knownSecrets,
  redactKnownSecrets,
  redactSecrets,
  registerSecret,
  secretsFromEnvironment,
} from "./redact.js";

describe("redactSecrets", () => {
  it("removes known values wherever they occur", () => {
    expect(redactSecrets("key=abcdef123 and again abcdef123.", ["abcdef123"])).toBe(
      "key=[REDACTED] and again [REDACTED].",
    );
  });

  it("removes common key shapes without being told", () => {
    const text =
      "anthropic sk-ant-api03-AbCdEf_123456 openai sk-proj-ZYXWVU987654 header Authorization: Bearer eyJhbGciOi.payload.sig";
    const redacted = redactSecrets(text);
    expect(redacted).toBe(
      "anthropic [REDACTED] openai [REDACTED] header Authorization: Bearer [REDACTED]",
    );
  });

  it("walks objects and arrays, keys included, without touching the input", () => {
    const input = {
      headers: { "x-api-key": "sk-ant-secretsecret" },
      list: ["ok", "Bearer abcdefghijkl"],
      n: 3,
    };
    const output = redactSecrets(input);
    expect(output).toEqual({
      headers: { "x-api-key": "[REDACTED]" },
      list: ["ok", "Bearer [REDACTED]"],
      n: 3,
    });
    expect(input.headers["x-api-key"]).toBe("sk-ant-secretsecret");
  });

  it("leaves ordinary words alone", () => {
    const text = "a risk-assessment task-list for the desk-top (skills are fine)";
    expect(redactSecrets(text)).toBe(text);
  });

  it("redacts api_key assignments and error messages", () => {
    expect(redactSecrets('{"api_key": "abcdefghijklmnop"}')).toBe('{"api_key": "[REDACTED]"}');
    const error = redactSecrets(new Error("401 for key topsecret-value"), ["topsecret-value"]);
    expect(error.message).toBe("401 for key [REDACTED]");
  });

  it("collects secrets from key-like environment variables", () => {
    expect(
      secretsFromEnvironment({ OPENAI_API_KEY: "a", GITHUB_TOKEN: "b", HOME: "/root" }).sort(),
    ).toEqual(["a", "b"]);
  });
});

describe("redaction at the boundaries", () => {
  it("removes other providers' token shapes without being told", () => {
    // Each token below is written by hand in its provider's documented shape.
    const github = `ghp_${"a1B2".repeat(9)}`;
    const aws = "AKIAIOSFODNN7EXAMPLE";
    const slack = "xoxb-1234567890-abcdefghij";
    const text = `github ${github} aws ${aws} slack ${slack}`;
    expect(redactSecrets(text)).toBe("github [REDACTED] aws [REDACTED] slack [REDACTED]");
  });

  it("removes registered secrets and key-like variables of the environment everywhere", () => {
    registerSecret("registered-value-7d1c");
    const stored = redactKnownSecrets(
      { message: "saw registered-value-7d1c and env-value-91ab", nested: ["env-value-91ab"] },
      { MY_SERVICE_KEY: "env-value-91ab" },
    );
    expect(stored).toEqual({ message: "saw [REDACTED] and [REDACTED]", nested: ["[REDACTED]"] });
    expect(knownSecrets({})).toContain("registered-value-7d1c");
  });

  it("ignores values too short to be keys when registering", () => {
    registerSecret("abc");
    expect(knownSecrets({})).not.toContain("abc");
  });
});
