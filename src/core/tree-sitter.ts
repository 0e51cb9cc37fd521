/**
 * web-tree-sitter, required and initialised once per process for every caller (the wiki's
 * repository connector, the verifier's patch scan). One loader because the package replaces its
 * own `module.exports` when `init()` resolves: a second `require` after another caller's `init`
 * returns a class without `init`, so callers that each required and initialised it broke one
 * another, depending on which ran first.
 */
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { assertInstalled, requireOptional, resolveOptional } from "./optional.js";

// web-tree-sitter is CommonJS (`export =`); required, to keep strict ESM settings.
type ParserClass = typeof import("web-tree-sitter");

const requireFromHere = createRequire(import.meta.url);
let ready: Promise<ParserClass> | undefined;

/** The initialised parser class; `feature` names what needs it in the "install …" error. */
export function treeSitterParser(feature: string): Promise<ParserClass> {
  ready ??= initialise(feature).catch((error: unknown) => {
    ready = undefined;
    throw error;
  });
  return ready;
}

async function initialise(feature: string): Promise<ParserClass> {
  assertInstalled(["web-tree-sitter", "tree-sitter-wasms/package.json"], feature);
  let Parser = requireOptional<ParserClass>("web-tree-sitter", feature);
  if (typeof Parser.init !== "function") {
    // Someone else initialised it first, and the export is now the WebAssembly module, not the
    // class: load a fresh copy of the package (a second, independent WebAssembly instance).
    delete requireFromHere.cache[requireFromHere.resolve("web-tree-sitter")];
    Parser = requireOptional<ParserClass>("web-tree-sitter", feature);
  }
  await Parser.init();
  return Parser;
}

/** The path of tree-sitter-wasms' grammar `name` (e.g. "python"). */
export function treeSitterGrammar(name: string, feature: string): string {
  return join(
    dirname(resolveOptional("tree-sitter-wasms/package.json", feature)),
    "out",
    `tree-sitter-${name}.wasm`,
  );
}
