import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { extractCodeRegions } from "./repository.js";

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "skillsmith-regions-"));
  // The bash grammar's scanner throws on `case … esac` (a runtime function web-tree-sitter lacks).
  await writeFile(
    join(root, "build.sh"),
    'case "$1" in\n  a) echo a;;\nesac\nhelper() { echo; }\n',
  );
  await writeFile(join(root, "tool.py"), "def first():\n    pass\n\n\nclass Second:\n    pass\n");
  await writeFile(join(root, "style.css"), "a { color: red; }\n");
});
afterAll(() => rm(root, { recursive: true, force: true }));

describe("extractCodeRegions", () => {
  it("records a file its grammar cannot parse and still extracts every other file", async () => {
    const unparsed: string[] = [];
    const units = await extractCodeRegions(root, ["build.sh", "style.css", "tool.py"], {
      unparsed,
    });
    expect(unparsed).toEqual(["build.sh"]);
    expect(units.map((unit) => unit.locator)).toEqual([
      "tool.py:1-2 function_definition first",
      "tool.py:5-6 class_definition Second",
    ]);
  });

  it("reads a file without a grammar, or one that failed, as one whole-file unit when asked", async () => {
    const units = await extractCodeRegions(root, ["build.sh", "style.css"], { wholeFiles: true });
    expect(units.map((unit) => [unit.index, unit.locator, unit.language])).toEqual([
      [0, "build.sh:1-5 whole file", "bash"],
      [1, "style.css:1-2 whole file", "css"],
    ]);
    expect(units[1]?.text).toBe("a { color: red; }\n");
  });
});
