import { describe, expect, it } from "vitest";
import { z } from "zod";
import { checkYaml, parseYamlMergingDuplicates } from "./yaml.js";

const schema = z.strictObject({
  name: z.string(),
  items: z.array(z.strictObject({ id: z.string(), size: z.number().int().positive() })),
});

describe("checkYaml", () => {
  it("returns the typed value when the text is valid", () => {
    const result = checkYaml("name: x\nitems:\n  - id: a\n    size: 2\n", schema);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.value).toEqual({ name: "x", items: [{ id: "a", size: 2 }] });
    expect(result.lineOf(["items", 0, "size"])).toBe(4);
  });

  it("reports every schema problem with its field and line", () => {
    const text = [
      "name: 3", // line 1: wrong type
      "items:",
      "  - id: a",
      "    size: -1", // line 4: not positive
      "  - id: b",
      "    colour: red", // line 6: unknown field; size missing (item starts line 5)
    ].join("\n");
    const result = checkYaml(text, schema);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    const summary = result.problems.map((problem) => `${problem.line}:${problem.field}`).sort();
    expect(summary).toEqual(["1:name", "4:items.0.size", "5:items.1.size", "6:items.1.colour"]);
    expect(result.problems.find((problem) => problem.field === "items.1.colour")?.message).toBe(
      'unknown field "colour"',
    );
  });

  it("reports a duplicate key as a problem with the line of the repeat", () => {
    const result = checkYaml("name: a\nitems: []\nname: b\n", schema);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problems).toHaveLength(1);
    expect(result.problems[0]?.line).toBe(3);
    expect(result.problems[0]?.message).toMatch(/unique/);
  });

  it("reports a syntax error with its line", () => {
    const result = checkYaml("name: a\nitems: [1, 2\n", schema);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problems[0]?.line).toBeGreaterThanOrEqual(2);
  });
});

describe("parseYamlMergingDuplicates", () => {
  it("merges a repeated map key instead of dropping the first map", () => {
    const text = [
      "environment:",
      "  limits:",
      '    cpus: "4"',
      "    memory: 8g",
      "  setup: []",
      "  limits:",
      "    max_iterations: 1",
      "    total_timeout_sec: 1800",
    ].join("\n");
    const result = parseYamlMergingDuplicates(text);
    expect(result.value).toEqual({
      environment: {
        limits: { cpus: "4", memory: "8g", max_iterations: 1, total_timeout_sec: 1800 },
        setup: [],
      },
    });
    expect(result.duplicates).toEqual([
      { key: "limits", parent: "environment", firstLine: 2, secondLine: 6, resolution: "merged" },
    ]);
    expect(result.lineOf(["environment", "setup"])).toBe(5);
  });

  it("reports a leaf written twice with different values as a conflict (last wins)", () => {
    const result = parseYamlMergingDuplicates("a:\n  x: 1\na:\n  x: 2\n");
    expect(result.value).toEqual({ a: { x: 2 } });
    expect(result.duplicates[0]?.resolution).toBe("conflict");
    expect(result.duplicates[0]?.detail).toBe("a.x: 1 replaced by 2");
  });

  it("keeps a null value as null (url: null in the v1 config)", () => {
    expect(parseYamlMergingDuplicates("repo:\n  url: null\n  commit:\n").value).toEqual({
      repo: { url: null, commit: null },
    });
  });
});
