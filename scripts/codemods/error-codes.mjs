#!/usr/bin/env node
/**
 * Moves error codes to the one convention (`<module>.<kebab-name>`, ARCHITECTURE.md "Error
 * codes") and keeps the per-module registries (`src/<module>/error-codes.ts`) and the table of
 * old spellings (`src/core/error-code-renames.ts`) in step with the code.
 *
 *   node scripts/codemods/error-codes.mjs           # report what would change
 *   node scripts/codemods/error-codes.mjs --write   # change the files
 *
 * Safe to run again after merging a branch written against the old spellings: the table of old
 * spellings is the data (old → new); a code thrown under src/ that is neither registered nor in
 * the table is given a name by the convention (the throwing file's module, the old spelling in
 * lower-case words), added to the table and registered. Tests and docs only get the renames.
 *
 * A string is an error code when the type checker says it is passed where an `ErrorCode` is
 * declared (an error's constructor, `parseInput`'s `code`, a comparison with `error.code`),
 * so words that merely look like codes (a skill finding's `path-not-found`) are left alone.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const write = process.argv.includes("--write");

/**
 * The modules, lowest layer first (`ERROR_CODE_MODULES` in core/errors.ts, read from there): an
 * old code thrown by two modules goes to the lower one.
 */
const MODULES = modulesOfCore();
const CONVENTION = new RegExp(`^(?:${MODULES.join("|")})\\.[a-z0-9]+(?:-[a-z0-9]+)*$`);
const RENAMES_FILE = join(root, "src", "core", "error-code-renames.ts");
const registryFile = (module) => join(root, "src", module, "error-codes.ts");

function readSource(path) {
  try {
    return ts.createSourceFile(path, readFileSync(path, "utf8"), ts.ScriptTarget.Latest, true);
  } catch (error) {
    if (error.code === "ENOENT") return undefined;
    throw error;
  }
}

function modulesOfCore() {
  const source = readSource(join(root, "src", "core", "errors.ts"));
  let modules;
  const visit = (node) => {
    if (ts.isVariableDeclaration(node) && node.name.getText() === "ERROR_CODE_MODULES")
      modules = stringsIn(node.initializer);
    else ts.forEachChild(node, visit);
  };
  visit(source);
  if (modules === undefined || modules.length === 0)
    throw new Error("src/core/errors.ts declares no ERROR_CODE_MODULES");
  return modules;
}

function stringsIn(node, found = []) {
  if (ts.isStringLiteral(node)) found.push(node.text);
  // forEachChild stops at the first callback returning a value: return nothing.
  ts.forEachChild(node, (child) => {
    stringsIn(child, found);
  });
  return found;
}

/** old → new, from the object literal of `src/core/error-code-renames.ts`. */
function loadRenames() {
  const renames = new Map();
  const source = readSource(RENAMES_FILE);
  if (source === undefined) return renames;
  const visit = (node) => {
    if (ts.isPropertyAssignment(node) && ts.isStringLiteral(node.initializer))
      renames.set(node.name.text ?? node.name.getText(), node.initializer.text);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return renames;
}

/** module → the set of its registered codes. */
function loadRegistries() {
  const registries = new Map(MODULES.map((module) => [module, new Set()]));
  for (const module of MODULES) {
    const source = readSource(registryFile(module));
    if (source === undefined) continue;
    for (const text of stringsIn(source))
      if (text.startsWith(`${module}.`)) registries.get(module).add(text);
  }
  return registries;
}

function moduleOf(path) {
  const parts = relative(join(root, "src"), path).split(sep);
  return parts.length > 1 && MODULES.includes(parts[0]) ? parts[0] : undefined;
}

/** The name the convention gives `old` when `module` throws it. */
export function derive(old, module) {
  const words = old
    .replace(/([a-z0-9])([A-Z])/g, "$1-$2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((word) => word !== "");
  const [first, ...rest] = old.toLowerCase().split(".");
  const named =
    first === module && rest.length > 0 ? words.slice(first.split(/[^a-z0-9]+/).length) : words;
  return `${module}.${named.join("-")}`;
}

function declaredAsErrorCode(symbol) {
  const declaration = symbol?.valueDeclaration ?? symbol?.declarations?.[0];
  // Packages have codes of their own (the YAML parser's `ErrorCode`, "DUPLICATE_KEY").
  if (declaration === undefined || declaration.getSourceFile().fileName.includes("node_modules"))
    return false;
  const type = declaration?.type?.getText();
  return type === "ErrorCode" || type === "ErrorCode | undefined";
}

/** Whether the checker places `literal` where an `ErrorCode` is expected. */
function isErrorCodePosition(literal, checker) {
  let node = literal;
  while (
    ts.isParenthesizedExpression(node.parent) ||
    (ts.isConditionalExpression(node.parent) && node.parent.condition !== node)
  )
    node = node.parent;
  const parent = node.parent;
  if (
    (ts.isCallExpression(parent) || ts.isNewExpression(parent)) &&
    parent.arguments?.includes(node)
  ) {
    const signature = checker.getResolvedSignature(parent);
    const parameter = signature?.parameters[parent.arguments.indexOf(node)];
    return declaredAsErrorCode(parameter);
  }
  if (
    ts.isPropertyAssignment(parent) &&
    parent.initializer === node &&
    parent.name.getText() === "code" &&
    ts.isObjectLiteralExpression(parent.parent)
  ) {
    const contextual = checker.getContextualType(parent.parent);
    if (contextual === undefined) return false;
    const types = contextual.isUnion() ? contextual.types : [contextual];
    return types.some((type) => declaredAsErrorCode(type.getProperty("code")));
  }
  if (
    ts.isBinaryExpression(parent) &&
    [ts.SyntaxKind.EqualsEqualsEqualsToken, ts.SyntaxKind.ExclamationEqualsEqualsToken].includes(
      parent.operatorToken.kind,
    )
  ) {
    const other = parent.left === node ? parent.right : parent.left;
    return declaredAsErrorCode(checker.getSymbolAtLocation(other));
  }
  return false;
}

function isTestFile(path) {
  const relativePath = relative(root, path);
  return relativePath.startsWith(`test${sep}`) || relativePath.endsWith(".test.ts");
}

function layerOf(path) {
  const module = moduleOf(path);
  return module === undefined ? MODULES.length : MODULES.indexOf(module);
}

/** The project's files and the report's browser scripts (their own tsconfig), in one program. */
function program() {
  const parse = (file) =>
    ts.getParsedCommandLineOfConfigFile(
      join(root, file),
      {},
      {
        ...ts.sys,
        onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
          throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n"));
        },
      },
    );
  const config = parse("tsconfig.json");
  const browser = parse("tsconfig.browser.json");
  const files = [...new Set([...config.fileNames, ...browser.fileNames])];
  return ts.createProgram(files, browser.options);
}

function registryText(module, codes) {
  const name = module.toUpperCase();
  const type = `${module[0].toUpperCase()}${module.slice(1)}ErrorCode`;
  const lines = [...codes].sort().map((code) => `  "${code}",`);
  return `/**
 * The error codes of \`${module}/\`: an error of this module can only be built with one of them
 * (\`ErrorCodeRegistry\` in core/errors.ts). Convention and how to add one: ARCHITECTURE.md,
 * "Error codes". Kept sorted by scripts/codemods/error-codes.mjs.
 */
export const ${name}_ERROR_CODES = [
${lines.join("\n")}
] as const satisfies readonly \`${module}.\${string}\`[];

export type ${type} = (typeof ${name}_ERROR_CODES)[number];

declare module "${module === "core" ? "./errors.js" : "../core/errors.js"}" {
  interface ErrorCodeRegistry extends Record<${type}, "${module}"> {}
}
`;
}

function renamesText(renames) {
  const lines = [...renames]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    // Keys quoted only when they must be, as the formatter (Biome) writes them.
    .map(([from, to]) => {
      const key = /^[A-Za-z_$][\w$]*$/.test(from) ? from : JSON.stringify(from);
      return `  ${key}: ${JSON.stringify(to)},`;
    });
  return `/**
 * Error codes as older versions spelled them, and their names now (ARCHITECTURE.md, "Error
 * codes"). Codes stored on disk by an older version (a wiki pool's failed acquisitions) are read
 * through \`currentErrorCode\`; scripts/codemods/error-codes.mjs reads this table as its data to
 * move code written against the old spellings.
 */
import type { ErrorCode } from "./errors.js";

export const ERROR_CODE_RENAMES: Readonly<Record<string, ErrorCode>> = {
${lines.join("\n")}
};

/** \`code\` under its current name: an old spelling renamed, anything else unchanged. */
export function currentErrorCode(code: string): string {
  return Object.hasOwn(ERROR_CODE_RENAMES, code) ? (ERROR_CODE_RENAMES[code] as string) : code;
}
`;
}

function main() {
  const renames = loadRenames();
  const registries = loadRegistries();
  const registered = (code) => MODULES.some((module) => registries.get(module).has(code));
  const typed = program();
  const typedChecker = typed.getTypeChecker();
  const files = typed
    .getSourceFiles()
    .filter(
      (source) =>
        !source.fileName.includes("node_modules") &&
        !source.isDeclarationFile &&
        !/error-codes\.ts$|error-code-renames\.ts$/.test(source.fileName),
    )
    .sort(
      (a, b) =>
        Number(isTestFile(a.fileName)) - Number(isTestFile(b.fileName)) ||
        layerOf(a.fileName) - layerOf(b.fileName) ||
        (a.fileName < b.fileName ? -1 : 1),
    );
  // Words src/ uses both as error codes and as something else (a skill finding's
  // `path-not-found`): a test's use of them is listed for a reader, not renamed.
  const plainStrings = new Set();
  const ambiguous = [];
  const edits = new Map();
  const added = [];
  const unregistered = [];
  const edit = (source, literal, to) => {
    const list = edits.get(source.fileName) ?? [];
    list.push({
      start: literal.getStart(source) + 1,
      end: literal.getEnd() - 1,
      to,
      from: literal.text,
    });
    edits.set(source.fileName, list);
  };
  for (const source of files) {
    const module = moduleOf(source.fileName);
    const test = isTestFile(source.fileName);
    const visit = (node) => {
      if (
        (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) &&
        isErrorCodePosition(node, typedChecker)
      ) {
        const code = node.text;
        if (!registered(code)) {
          let to = renames.get(code);
          if (to === undefined && !test && module !== undefined) {
            to =
              CONVENTION.test(code) && code.startsWith(`${module}.`) ? code : derive(code, module);
            if (to !== code) renames.set(code, to);
            added.push(`${code} → ${to} (${relative(root, source.fileName)})`);
          }
          if (to === undefined) {
            const where = source.getLineAndCharacterOfPosition(node.getStart(source));
            unregistered.push(`${relative(root, source.fileName)}:${where.line + 1} "${code}"`);
          } else {
            registries.get(to.split(".")[0]).add(to);
            if (to !== code) edit(source, node, to);
          }
        }
      } else if (!test && ts.isStringLiteral(node)) {
        plainStrings.add(node.text);
      } else if (test && ts.isStringLiteral(node) && renames.has(node.text)) {
        // Tests assert codes in places the checker cannot type (`toBe("old")`): the old
        // spelling is renamed where the statement speaks of a code.
        let statement = node;
        while (statement.parent !== undefined && !ts.isStatement(statement))
          statement = statement.parent;
        const where = source.getLineAndCharacterOfPosition(node.getStart(source));
        if (plainStrings.has(node.text))
          ambiguous.push(`${relative(root, source.fileName)}:${where.line + 1} "${node.text}"`);
        else if (/\bcode|toThrow|rejects/i.test(statement.getText(source)))
          edit(source, node, renames.get(node.text));
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  for (const [from, to] of renames) {
    const module = to.split(".")[0];
    if (!CONVENTION.test(to))
      throw new Error(`rename ${from} → ${to} does not follow the convention`);
    registries.get(module).add(to);
  }
  let changed = 0;
  for (const [file, list] of edits) {
    let text = readFileSync(file, "utf8");
    for (const { start, end, to } of list.sort((a, b) => b.start - a.start))
      text = text.slice(0, start) + to + text.slice(end);
    changed += list.length;
    if (write) writeFileSync(file, text);
  }
  const outputs = [[RENAMES_FILE, renamesText(renames)]];
  for (const module of MODULES)
    if (registries.get(module).size > 0)
      outputs.push([registryFile(module), registryText(module, registries.get(module))]);
  for (const [file, text] of outputs) {
    let before = "";
    try {
      before = readFileSync(file, "utf8");
    } catch {}
    if (before !== text) {
      console.log(`${write ? "wrote" : "would write"} ${relative(root, file)}`);
      if (write) writeFileSync(file, text);
    }
  }
  console.log(`${changed} code(s) ${write ? "renamed" : "to rename"} in ${edits.size} file(s)`);
  for (const line of added) console.log(`new name: ${line}`);
  for (const line of unregistered) console.log(`unregistered, not renamed: ${line}`);
  for (const line of ambiguous) console.log(`also a plain word in src/, check by hand: ${line}`);
  if (!write && (changed > 0 || added.length > 0)) process.exitCode = 1;
}

main();
