import { describe, expect, it } from "vitest";
import { z } from "zod";
import { InputError, isSkillsmithError } from "./errors.js";
import { firstProblem, parseInput, parseJsonResult, parseResult } from "./parse.js";

const schema = z.strictObject({
  name: z.string(),
  steps: z.array(z.strictObject({ command: z.string() })),
});

describe("parseResult", () => {
  it("returns the parsed value when the input matches", () => {
    const value = { name: "a", steps: [{ command: "ls" }] };
    expect(parseResult(schema, value)).toEqual({ ok: true, value });
  });

  it("names the deepest failing field as a dotted path", () => {
    const result = parseResult(schema, { name: "a", steps: [{ command: 3 }] });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    // steps → index 1st element (0) → command: the path written by hand from the input above.
    expect(result.error.field).toBe("steps.0.command");
    expect(result.error.message).toMatch(/string/);
  });

  it("leaves the field out when the value as a whole is wrong", () => {
    const result = parseResult(schema, "not an object");
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect("field" in result.error).toBe(false);
  });

  it("keeps every issue's message, in order", () => {
    const result = parseResult(schema, { name: 1, steps: "x" });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    // Two fields are wrong in the input, so two issues.
    expect(result.error.issues).toHaveLength(2);
    expect(result.error.message).toBe(result.error.issues[0]);
  });
});

describe("parseJsonResult", () => {
  it("parses JSON text through the schema", () => {
    expect(parseJsonResult(schema, '{"name":"a","steps":[]}')).toEqual({
      ok: true,
      value: { name: "a", steps: [] },
    });
  });

  it("says text that is not JSON is not, on the value as a whole", () => {
    const result = parseJsonResult(schema, '{"name":');
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error.message).toMatch(/^not valid JSON/);
    expect("field" in result.error).toBe(false);
  });

  it("names the field of JSON that does not match", () => {
    const result = parseJsonResult(schema, '{"name":"a","steps":[{}]}');
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error.field).toBe("steps.0.command");
  });
});

describe("firstProblem", () => {
  it("names a symbol key instead of throwing", () => {
    const marker = Symbol("marker");
    const error = new z.ZodError([
      { code: "custom", message: "bad", path: ["outer", marker], input: undefined },
    ]);
    expect(firstProblem(error)).toEqual({
      message: "bad",
      field: "outer.Symbol(marker)",
      path: ["outer"],
      issues: ["bad"],
    });
  });
});

describe("parseInput", () => {
  it("returns the parsed value", () => {
    expect(parseInput(schema, { name: "a", steps: [] }, { code: "model.config-invalid" })).toEqual({
      name: "a",
      steps: [],
    });
  });

  it("throws an InputError naming the file, line, field and what was expected", () => {
    let thrown: unknown;
    try {
      parseInput(
        schema,
        { name: "a", steps: [{}] },
        {
          code: "model.config-invalid",
          location: { file: "demo.jsonl", line: 7 },
          describe: (problem) => `${problem.message} (each line needs name and steps)`,
        },
      );
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(InputError);
    expect(isSkillsmithError(thrown)).toBe(true);
    const error = thrown as InputError;
    expect(error.code).toBe("model.config-invalid");
    expect(error.location).toEqual({ file: "demo.jsonl", line: 7, field: "steps.0.command" });
    expect(error.message).toMatch(/^demo\.jsonl, line 7, field "steps\.0\.command": /);
    expect(error.message).toMatch(/\(each line needs name and steps\)$/);
    expect(error.data).toMatchObject({ issues: [expect.any(String)] });
  });

  it("takes the line from lineOf when the location names none", () => {
    const asked: unknown[] = [];
    expect(() =>
      parseInput(
        schema,
        { name: "a", steps: [{ command: 1 }] },
        {
          code: "model.config-invalid",
          location: { file: "f.yaml" },
          lineOf: (path) => {
            asked.push(path);
            return 12;
          },
        },
      ),
    ).toThrow(/^f\.yaml, line 12, field "steps\.0\.command": /);
    expect(asked).toEqual([["steps", 0, "command"]]);
  });

  it("uses zod's message when no description is given, with no field for a top-level mismatch", () => {
    expect(() =>
      parseInput(schema, 42, { code: "model.config-invalid", location: { file: "f" } }),
    ).toThrow(/^f: .*object/);
  });
});
