/**
 * Repository connector: code regions by AST (tree-sitter grammars as WebAssembly), the code
 * blocks of its READMEs and docs pages, and its HTML, CSS and SVG files, with the README as
 * context. A region is a top-level definition (function, class, …) of a source file;
 * regions are numbered in path order, then source order, which makes the numbering stable.
 */
import { createHash } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import { extname, join, relative } from "node:path";
import { treeSitterGrammar, treeSitterParser } from "../../core/tree-sitter.js";
import { markdownUnits } from "./document.js";
import type { ExtractedUnit } from "./types.js";

/** Grammar file (in tree-sitter-wasms) and the top-level node types that count as a region. */
const grammars: Readonly<
  Record<string, { grammar: string; language: string; nodes: readonly string[] }>
> = {
  ".py": {
    grammar: "python",
    language: "python",
    nodes: ["function_definition", "class_definition", "decorated_definition"],
  },
  ".js": {
    grammar: "javascript",
    language: "javascript",
    nodes: ["function_declaration", "class_declaration", "export_statement", "lexical_declaration"],
  },
  ".mjs": {
    grammar: "javascript",
    language: "javascript",
    nodes: ["function_declaration", "class_declaration", "export_statement", "lexical_declaration"],
  },
  ".ts": {
    grammar: "typescript",
    language: "typescript",
    nodes: [
      "function_declaration",
      "class_declaration",
      "export_statement",
      "lexical_declaration",
      "interface_declaration",
    ],
  },
  ".sh": { grammar: "bash", language: "bash", nodes: ["function_definition"] },
  ".go": {
    grammar: "go",
    language: "go",
    nodes: ["function_declaration", "method_declaration", "type_declaration"],
  },
  ".rs": {
    grammar: "rust",
    language: "rust",
    nodes: ["function_item", "struct_item", "impl_item", "enum_item"],
  },
};

const SKIPPED_FOLDERS = new Set([
  ".git",
  "node_modules",
  "__pycache__",
  ".venv",
  "dist",
  "build",
  "target",
]);
const MAX_FILES = 2_000;
const MAX_FILE_BYTES = 512 * 1024;
const README_CONTEXT_CHARS = 4_000;

type Language = import("web-tree-sitter").Language;
type SyntaxNode = import("web-tree-sitter").SyntaxNode;
// Loaded on first use, not with this module: only code resources need the parser, and the
// parser and its grammars are optional peer dependencies.
const CODE_FEATURE = "code resources in the wiki (tree-sitter parsing)";
const languages = new Map<string, Promise<Language>>();

async function languageFor(name: string): Promise<Language> {
  const Parser = await treeSitterParser(CODE_FEATURE);
  const cached = languages.get(name);
  if (cached !== undefined) return cached;
  const loaded = Parser.Language.load(treeSitterGrammar(name, CODE_FEATURE));
  languages.set(name, loaded);
  return loaded;
}

/** Files of a repository (relative, forward slashes, sorted), without VCS and dependency folders. */
export async function repositoryFiles(root: string): Promise<string[]> {
  const files: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    const dirents = await readdir(dir, { withFileTypes: true });
    dirents.sort((left, right) => (left.name < right.name ? -1 : left.name > right.name ? 1 : 0));
    for (const dirent of dirents) {
      if (files.length >= MAX_FILES) return;
      const path = join(dir, dirent.name);
      if (dirent.isDirectory()) {
        if (!SKIPPED_FOLDERS.has(dirent.name)) await walk(path);
      } else if (dirent.isFile()) files.push(relative(root, path).split("\\").join("/"));
    }
  };
  await walk(root);
  return files.sort();
}

/** A repository's content hash: SHA-256 over each file's path and SHA-256, in path order. */
export async function repositoryHash(
  root: string,
  files: readonly string[],
): Promise<{ sha256: string; bytes: number }> {
  const hash = createHash("sha256");
  let bytes = 0;
  for (const file of files) {
    const data = await readFile(join(root, file));
    bytes += data.length;
    hash.update(`${file}\0${createHash("sha256").update(data).digest("hex")}\n`);
  }
  return { sha256: hash.digest("hex"), bytes };
}

function nameOf(node: SyntaxNode): string {
  const named =
    node.childForFieldName("name") ??
    node.childForFieldName("declaration")?.childForFieldName("name");
  if (named !== null && named !== undefined) return named.text;
  for (const child of node.namedChildren) {
    const inner = child.childForFieldName("name");
    if (inner !== null) return inner.text;
  }
  return "";
}

/**
 * Tutorial files of a repository that are units besides its code: Markdown READMEs and docs
 * pages (their code blocks), and HTML, CSS and SVG files (each a whole-file example for the
 * render gate).
 */
function tutorialKind(file: string): "markdown" | "example" | undefined {
  const extension = extname(file).toLowerCase();
  if (extension === ".md" || extension === ".markdown")
    return /(?:^|\/)readme\.[^/]+$/i.test(file) || /^(?:docs?|examples?)\//i.test(file)
      ? "markdown"
      : undefined;
  if ([".html", ".htm", ".css", ".svg"].includes(extension)) return "example";
  return undefined;
}

/** Languages of whole-file units, by extension (files without a grammar). */
const WHOLE_FILE_LANGUAGES: Readonly<Record<string, string>> = {
  ".css": "css",
  ".html": "html",
  ".htm": "html",
  ".svg": "svg",
  ".md": "markdown",
  ".yml": "yaml",
  ".yaml": "yaml",
  ".json": "json",
  ".toml": "toml",
};

/**
 * Top-level definitions of every source file with a known grammar. With `wholeFiles` (a
 * repository read in part, e.g. the file a code search found), a file without a grammar or
 * without a top-level definition is one unit, the whole file, so nothing found is left unread.
 */
export async function extractCodeRegions(
  root: string,
  files: readonly string[],
  options: { wholeFiles?: boolean; unparsed?: string[] } = {},
): Promise<ExtractedUnit[]> {
  const units: ExtractedUnit[] = [];
  const Parser = await treeSitterParser(CODE_FEATURE);
  let parser = new Parser();
  try {
    for (const file of files) {
      const extension = extname(file).toLowerCase();
      const grammar = grammars[extension];
      const tutorial = tutorialKind(file);
      if (grammar === undefined && tutorial === undefined && options.wholeFiles !== true) continue;
      const data = await readFile(join(root, file));
      if (data.length > MAX_FILE_BYTES) continue;
      if (tutorial === "markdown") {
        // A README's or docs page's examples: its fenced code blocks, with their heading paths.
        for (const block of markdownUnits(data.toString("utf8"), file))
          if (block.kind === "code-block") units.push({ ...block, index: units.length });
        continue;
      }
      if (tutorial === "example") {
        const text = data.toString("utf8");
        if (text.trim() !== "")
          units.push({
            index: units.length,
            kind: "code-region",
            locator: `${file}:1-${text.split("\n").length} whole file`,
            text,
            language: WHOLE_FILE_LANGUAGES[extension] ?? extension.slice(1),
          });
        continue;
      }
      const before = units.length;
      const wholeFile = () => {
        const text = data.toString("utf8");
        if (units.length > before || text.trim() === "") return;
        units.push({
          index: units.length,
          kind: "code-region",
          locator: `${file}:1-${text.split("\n").length} whole file`,
          text,
          language: grammar?.language ?? WHOLE_FILE_LANGUAGES[extension] ?? extension.slice(1),
        });
      };
      if (grammar === undefined) {
        wholeFile();
        continue;
      }
      parser.setLanguage(await languageFor(grammar.grammar));
      let tree: ReturnType<typeof parser.parse>;
      try {
        tree = parser.parse(data.toString("utf8"));
      } catch {
        // Some grammars' scanners need runtime functions web-tree-sitter lacks (the bash grammar
        // throws on `case … esac`): that file has no regions, the rest of the repository does.
        // The parser may be left inconsistent, so the next file gets a new one.
        options.unparsed?.push(file);
        parser.delete();
        parser = new Parser();
        if (options.wholeFiles === true) wholeFile();
        continue;
      }
      try {
        for (const node of tree.rootNode.namedChildren) {
          if (!grammar.nodes.includes(node.type)) continue;
          // A JavaScript `const x = 1` is not a procedure; keep declarations of functions only.
          if (node.type === "lexical_declaration" && !/=>|function/.test(node.text)) continue;
          const name = nameOf(node);
          const start = node.startPosition.row + 1;
          const end = node.endPosition.row + 1;
          units.push({
            index: units.length,
            kind: "code-region",
            locator: `${file}:${start}-${end} ${node.type}${name === "" ? "" : ` ${name}`}`,
            text: node.text,
            language: grammar.language,
          });
        }
      } finally {
        tree.delete();
      }
      if (options.wholeFiles === true) wholeFile();
    }
  } finally {
    parser.delete();
  }
  return units;
}

/** The README (or docs index) excerpt given to the distiller as context. */
export async function readmeContext(root: string, files: readonly string[]): Promise<string> {
  const readme =
    files.find((file) => /^readme(\.md|\.rst|\.txt)?$/i.test(file)) ??
    files.find((file) => /^docs\/(index|readme)\.md$/i.test(file));
  if (readme === undefined) return "";
  const text = await readFile(join(root, readme), "utf8");
  return `${readme}:\n${text.slice(0, README_CONTEXT_CHARS)}`;
}

export const LICENCE_FILE_PATTERN = /^(licen[cs]e|copying)(\.md|\.txt)?$/i;
/** Further licence files at the top of a repository: `LICENSE.APACHE`, `LICENSE-MIT`, … */
export const OTHER_LICENCE_FILE_PATTERN = /^(licen[cs]e|copying)[.-][A-Za-z0-9.-]+$/i;
