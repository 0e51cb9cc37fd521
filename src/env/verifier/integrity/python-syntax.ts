/**
 * Python's syntax tree without Python: tree-sitter's Python grammar as WebAssembly (the wiki's
 * repository connector uses the same packages). Error-tolerant, so a hunk of a diff (a fragment
 * that may start inside a block) still parses into the statements it holds. Loaded on first use:
 * only the patch scan needs it.
 */
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

// web-tree-sitter is CommonJS (`export =`): required, to keep strict ESM settings.
type ParserClass = typeof import("web-tree-sitter");
export type PythonNode = import("web-tree-sitter").SyntaxNode;
type PythonParser = import("web-tree-sitter");

let loading: Promise<PythonParser> | undefined;

async function load(): Promise<PythonParser> {
  const require = createRequire(import.meta.url);
  const Parser = require("web-tree-sitter") as ParserClass;
  await Parser.init();
  const grammar = join(
    dirname(require.resolve("tree-sitter-wasms/package.json")),
    "out",
    "tree-sitter-python.wasm",
  );
  const parser = new Parser();
  parser.setLanguage(await Parser.Language.load(grammar));
  return parser;
}

/**
 * Read the syntax tree of `source` (rows are 0-based lines of `source`) with `read`; the tree
 * lives in WebAssembly memory and is freed once `read` returns.
 */
export async function withPythonTree<Result>(
  source: string,
  read: (root: PythonNode) => Result,
): Promise<Result> {
  loading ??= load().catch((error: unknown) => {
    loading = undefined;
    throw error;
  });
  const tree = (await loading).parse(source);
  try {
    return read(tree.rootNode);
  } finally {
    tree.delete();
  }
}
