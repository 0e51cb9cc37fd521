import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { treeSitterGrammar, treeSitterParser } from "./tree-sitter.js";

describe("treeSitterParser", () => {
  it("parses after another caller required and initialised web-tree-sitter on its own", async () => {
    // The package swaps its export when init resolves: a caller that required it afterwards got
    // a class without `init`, and each loader's first use depended on who ran first.
    const require = createRequire(import.meta.url);
    const other = require("web-tree-sitter") as { init?: () => Promise<void> };
    if (typeof other.init === "function") await other.init();
    const Parser = await treeSitterParser("a test");
    const parser = new Parser();
    parser.setLanguage(await Parser.Language.load(treeSitterGrammar("python", "a test")));
    const tree = parser.parse("def f():\n    return 1\n");
    expect(tree.rootNode.firstChild?.type).toBe("function_definition");
    tree.delete();
    expect(await treeSitterParser("a test")).toBe(Parser);
  });
});
