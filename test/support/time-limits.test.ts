/**
 * No end-to-end or slow-tier test sets a time limit below its tier's default, nor a hook below
 * the hook default: such a limit only cuts the test off sooner on a busy machine (63 did, set
 * when the default was 30 s; docs/testing.md). A longer limit, for longer work, is fine.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import {
  besideTheCodeEndToEndFiles,
  endToEndLimitMs,
  hookLimitMs,
  slowFiles,
  slowLimitMs,
} from "../../vitest.config.js";

const root = resolve(import.meta.dirname, "..", "..");
const hooks = new Set(["beforeAll", "afterAll", "beforeEach", "afterEach"]);
const tests = new Set(["it", "test"]);

/** `it`, `it.skipIf(x)`, `it.each(rows)`: the name the call starts from. */
function calledName(expression: ts.Expression): string | undefined {
  if (ts.isIdentifier(expression)) return expression.text;
  if (ts.isPropertyAccessExpression(expression)) return calledName(expression.expression);
  if (ts.isCallExpression(expression)) return calledName(expression.expression);
  return undefined;
}

function numberOf(node: ts.Node | undefined): number | undefined {
  if (node === undefined) return undefined;
  if (ts.isNumericLiteral(node)) return Number(node.text.replaceAll("_", ""));
  if (ts.isObjectLiteralExpression(node))
    for (const property of node.properties)
      if (
        ts.isPropertyAssignment(property) &&
        ts.isIdentifier(property.name) &&
        property.name.text === "timeout"
      )
        return numberOf(property.initializer);
  return undefined;
}

/** Every explicit limit below `testDefault` (tests) or the hook default (hooks), as `file:line`. */
function limitsBelowDefault(file: string, source: string, testDefault: number): string[] {
  const parsed = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) && node.arguments.length >= 2) {
      const name = calledName(node.expression) ?? "";
      const floor = hooks.has(name) ? hookLimitMs : tests.has(name) ? testDefault : undefined;
      const limit = numberOf(node.arguments.at(-1));
      if (floor !== undefined && limit !== undefined && limit < floor) {
        const line = parsed.getLineAndCharacterOfPosition(node.getStart()).line + 1;
        found.push(`${file}:${line} ${name} ${limit} ms < ${floor} ms`);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(parsed);
  return found;
}

describe("time limits", () => {
  it("finds a test limit under the default, a hook limit under the hook default, and no others", () => {
    const source = [
      'it("a", async () => {}, 60_000);',
      'it.skipIf(false)("b", async () => {}, { timeout: 30_000 });',
      "beforeAll(async () => {}, 30_000);",
      'it("c", async () => {}, 600_000);',
      'it("d", async () => {});',
      "setTimeout(() => {}, 10);",
    ].join("\n");
    expect(limitsBelowDefault("x.test.ts", source, 120_000)).toEqual([
      "x.test.ts:1 it 60000 ms < 120000 ms",
      "x.test.ts:2 it 30000 ms < 120000 ms",
      "x.test.ts:3 beforeAll 30000 ms < 120000 ms",
    ]);
  });

  it("no end-to-end or slow test file sets a limit below its tier's default", () => {
    const files = [
      ...readdirSync(join(root, "test"))
        .filter((name) => name.endsWith(".test.ts"))
        .map((name) => `test/${name}`),
      ...besideTheCodeEndToEndFiles,
    ];
    expect(files.length).toBeGreaterThan(50);
    const found = files.flatMap((file) =>
      limitsBelowDefault(
        file,
        readFileSync(join(root, file), "utf8"),
        slowFiles.includes(file) ? slowLimitMs : endToEndLimitMs,
      ),
    );
    expect(found).toEqual([]);
    // Parses about a hundred files: a second quiet, 35 s at load 37.
  }, 120_000);
});
