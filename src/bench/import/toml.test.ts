import { describe, expect, it } from "vitest";
import { parseToml, TomlSyntaxError } from "./toml.js";

describe("parseToml", () => {
  it("reads a Harbor task.toml", () => {
    const text = [
      'version = "1.0"',
      "",
      "[metadata]",
      'author_name = "Ada"',
      'difficulty = "easy" # trailing comment',
      'tags = ["trivial", "alpine",]',
      "",
      "[verifier]",
      "timeout_sec = 120.0",
      'env = { API_KEY = "sk-test", DEBUG = true }',
      "",
      "[agent]",
      "timeout_sec = 1_200",
      "",
      "[environment]",
      "cpus = 2",
      "memory_mb = 4096",
      'memory = "4G"',
      "allow_internet = false",
    ].join("\n");
    expect(parseToml(text)).toEqual({
      version: "1.0",
      metadata: { author_name: "Ada", difficulty: "easy", tags: ["trivial", "alpine"] },
      verifier: { timeout_sec: 120, env: { API_KEY: "sk-test", DEBUG: true } },
      agent: { timeout_sec: 1200 },
      environment: { cpus: 2, memory_mb: 4096, memory: "4G", allow_internet: false },
    });
  });

  it("reads strings of every kind", () => {
    const text = [
      'basic = "tab\\there \\"q\\" \\u00e9"',
      "literal = 'C:\\path\\no-escape'",
      'multi = """',
      "line one",
      'line "two""""',
      'folded = """\\',
      "   a \\",
      '   b"""',
      "raw = '''",
      "keep \\n as is'''",
    ].join("\n");
    expect(parseToml(text)).toEqual({
      basic: 'tab\there "q" é',
      literal: "C:\\path\\no-escape",
      multi: 'line one\nline "two"',
      folded: "a b",
      raw: "keep \\n as is",
    });
  });

  it("reads numbers, dates, dotted and quoted keys, multi-line arrays and arrays of tables", () => {
    const text = [
      "hex = 0xff",
      "oct = 0o17",
      "bin = 0b101",
      "neg = -3",
      "exp = 1e3",
      "inf = -inf",
      "date = 1979-05-27T07:32:00Z",
      'site."google.com" = true',
      "a.b.c = 1",
      "list = [",
      "  1, # one",
      "  2,",
      "]",
      "[[step]]",
      'name = "first"',
      "[[step]]",
      'name = "second"',
    ].join("\n");
    expect(parseToml(text)).toEqual({
      hex: 255,
      oct: 15,
      bin: 5,
      neg: -3,
      exp: 1000,
      inf: Number.NEGATIVE_INFINITY,
      date: "1979-05-27T07:32:00.000Z",
      site: { "google.com": true },
      a: { b: { c: 1 } },
      list: [1, 2],
      step: [{ name: "first" }, { name: "second" }],
    });
  });

  it.each([
    ["a = 1\na = 2\n", 2],
    ["[t]\nx = 1\n[t]\ny = 2\n", 3],
    ['ok = 1\nbad = "open\n', 2],
    ["ok = 1\n\nbad = what\n", 3],
    ["a = 1 b = 2\n", 1],
    ["[table\n", 1],
  ])("rejects %j at line %i", (text, line) => {
    let caught: unknown;
    try {
      parseToml(text);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(TomlSyntaxError);
    expect((caught as TomlSyntaxError).line).toBe(line);
    expect((caught as TomlSyntaxError).message).toMatch(new RegExp(`^line ${line}: `));
  });
});
