import { afterEach, describe, expect, it, vi } from "vitest";
import { lineOfPath, parseLocated, readYamlValue, syntaxProblems } from "./yaml.js";

afterEach(() => {
  vi.restoreAllMocks();
});

describe("the YAML reader", () => {
  it("finds the line of a field, and of the deepest existing key for a missing one", () => {
    const located = parseLocated("name: demo\nlimits:\n  memory: 1g\n  cpus: 2\n", true);
    expect(lineOfPath(located, ["limits", "cpus"])).toBe(4);
    // "limits.disk" does not exist: the line of "limits" (line 2), where it should be added.
    expect(lineOfPath(located, ["limits", "disk"])).toBe(2);
  });

  it("reports duplicate keys with their line when keys must be unique", () => {
    const problems = syntaxProblems(parseLocated("a: 1\nb: 2\na: 3\n", true).document);
    expect(problems).toHaveLength(1);
    expect(problems[0]?.line).toBe(3);
    expect(parseLocated("a: 1\na: 3\n", false).document.errors).toEqual([]);
  });

  it("never prints the package's warnings (library code does not write to the console)", () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => undefined);
    const emit = vi.spyOn(process, "emitWarning").mockImplementation(() => undefined);
    // An unknown directive is a warning in the yaml package, not an error.
    const located = parseLocated("%UNKNOWN directive\n---\na: 1\n", true);
    expect(located.document.warnings.length).toBeGreaterThan(0);
    expect(warn).not.toHaveBeenCalled();
    expect(emit).not.toHaveBeenCalled();
  });
});

describe("readYamlValue", () => {
  it("gives the plain value and the line of each field", () => {
    const read = readYamlValue("tasks:\n  - id: a\n  - id: b\n    tests: 3\n");
    expect(read.ok).toBe(true);
    if (!read.ok) return;
    expect(read.value.value).toEqual({ tasks: [{ id: "a" }, { id: "b", tests: 3 }] });
    expect(read.value.lineOf(["tasks", 1, "tests"])).toBe(4);
  });

  it("refuses a key written twice, naming the second one's line", () => {
    const read = readYamlValue("id: a\nid: b\n");
    expect(read.ok).toBe(false);
    if (read.ok) return;
    expect(read.error.line).toBe(2);
    expect(read.error.message).toMatch(/unique/i);
  });
});
