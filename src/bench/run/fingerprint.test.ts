/**
 * The fingerprint changes with every input that determines a run — an attack on baseline reuse
 * is any change that leaves it equal — and stays equal across repeats and key order.
 */
import { describe, expect, it } from "vitest";
import { canonicalJson, type FingerprintInputs, fingerprintOf } from "./fingerprint.js";

const inputs: FingerprintInputs = {
  skillsmith: "0.2.0",
  base: { digest: "b".repeat(64), commit: "c".repeat(40) },
  agent: {
    harness: "claude-code",
    kind: "claude-code",
    version: "2.0.1 (Claude Code)",
    model: "anthropic:claude-sonnet-4-5",
    limits: { timeoutSeconds: 600 },
    skillLimits: null,
  },
  requirement: {
    id: "r1",
    text: "Write good.",
    fileOperations: ["out.txt"],
    verifier: { folder: "v".repeat(64), command: "sh check.sh", timeoutSeconds: 30 },
  },
  environmentLimits: null,
  sandbox: "local",
  skills: [],
};

describe("fingerprintOf", () => {
  it("is the same for the same inputs, whatever the key order", () => {
    const reordered = JSON.parse(canonicalJson(inputs)) as FingerprintInputs;
    expect(fingerprintOf({ ...reordered }).digest).toBe(fingerprintOf(inputs).digest);
    expect(canonicalJson({ b: 1, a: [{ d: 2, c: 3 }] })).toBe('{"a":[{"c":3,"d":2}],"b":1}');
  });

  it.each([
    ["agent version", { ...inputs, agent: { ...inputs.agent, version: "2.0.2 (Claude Code)" } }],
    ["model", { ...inputs, agent: { ...inputs.agent, model: "anthropic:claude-opus-4-1" } }],
    ["limits", { ...inputs, agent: { ...inputs.agent, limits: { timeoutSeconds: 601 } } }],
    ["base", { ...inputs, base: { ...inputs.base, digest: "a".repeat(64) } }],
    [
      "verifier",
      {
        ...inputs,
        requirement: {
          ...inputs.requirement,
          verifier: { ...inputs.requirement.verifier, folder: "w".repeat(64) },
        },
      },
    ],
    ["requirement text", { ...inputs, requirement: { ...inputs.requirement, text: "Write bad." } }],
    ["sandbox", { ...inputs, sandbox: "unsafe" }],
    ["skills installed", { ...inputs, skills: ["s".repeat(64)] }],
    ["skillsmith version", { ...inputs, skillsmith: "0.2.1" }],
  ] as const)("changes with the %s", (_name, changed) => {
    expect(fingerprintOf(changed as FingerprintInputs).digest).not.toBe(
      fingerprintOf(inputs).digest,
    );
  });
});
