/**
 * Python's syntax tree without Python: tree-sitter's Python grammar as WebAssembly (the wiki's
 * repository connector uses the same packages). Error-tolerant, so a hunk of a diff (a fragment
 * that may start inside a block) still parses into the statements it holds. Loaded on first use:
 * only the patch scan needs it.
 */
import { treeSitterGrammar, treeSitterParser } from "../../../core/tree-sitter.js";

export type PythonNode = import("web-tree-sitter").SyntaxNode;
type PythonParser = import("web-tree-sitter");

const SCAN_FEATURE = "the verifier's patch scan (tree-sitter parsing)";
let loading: Promise<PythonParser> | undefined;

async function load(): Promise<PythonParser> {
  const Parser = await treeSitterParser(SCAN_FEATURE);
  const parser = new Parser();
  parser.setLanguage(await Parser.Language.load(treeSitterGrammar("python", SCAN_FEATURE)));
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
