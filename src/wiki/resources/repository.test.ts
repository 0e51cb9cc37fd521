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
    // A stylesheet is an example for the render gate: one whole-file unit, in path order.
    expect(units.map((unit) => unit.locator)).toEqual([
      "style.css:1-2 whole file",
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

  it("takes the code blocks of READMEs and docs pages, not of other Markdown files", async () => {
    await writeFile(join(root, "README.md"), "# t\n\n## Use\n\n```python\nprint(1)\n```\n");
    await writeFile(join(root, "CHANGELOG.md"), "# c\n\n```\nold\n```\n");
    const units = await extractCodeRegions(root, ["CHANGELOG.md", "README.md"]);
    expect(units.map((unit) => [unit.index, unit.kind, unit.locator, unit.language])).toEqual([
      [0, "code-block", "README.md § t › Use, code block 1 (python)", "python"],
    ]);
  });
});
