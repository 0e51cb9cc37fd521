import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, sep } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { AGENTS_ERROR_CODES } from "../src/agents/error-codes.js";
import { BENCH_ERROR_CODES } from "../src/bench/error-codes.js";
import { CLI_ERROR_CODES } from "../src/cli/error-codes.js";
import { currentErrorCode, ERROR_CODE_RENAMES } from "../src/core/error-code-renames.js";
import { CORE_ERROR_CODES } from "../src/core/error-codes.js";
import { ERROR_CODE_MODULES, ERROR_CODE_PATTERN } from "../src/core/errors.js";
import { ENV_ERROR_CODES } from "../src/env/error-codes.js";
import { MODEL_ERROR_CODES } from "../src/model/error-codes.js";
import { REPORT_ERROR_CODES } from "../src/report/error-codes.js";
import { SKILL_ERROR_CODES } from "../src/skill/error-codes.js";
import { STATS_ERROR_CODES } from "../src/stats/error-codes.js";
import { SYNTH_ERROR_CODES } from "../src/synth/error-codes.js";
import { WIKI_ERROR_CODES } from "../src/wiki/error-codes.js";
import { MODULE_IMPORTS } from "./support/layers.js";

/**
 * Error codes come from one typed registry per module (ARCHITECTURE.md, "Error codes"). The type
 * checker refuses an unregistered code where it sees the `ErrorCode` type; this test also reads
 * the source, so a code that reaches an error another way (a variable, a cast) is caught too,
 * and so is a module throwing a code registered by a module it may not import.
 */
const registries: Record<string, readonly string[]> = {
  core: CORE_ERROR_CODES,
  skill: SKILL_ERROR_CODES,
  stats: STATS_ERROR_CODES,
  model: MODEL_ERROR_CODES,
  env: ENV_ERROR_CODES,
  agents: AGENTS_ERROR_CODES,
  bench: BENCH_ERROR_CODES,
  wiki: WIKI_ERROR_CODES,
  synth: SYNTH_ERROR_CODES,
  report: REPORT_ERROR_CODES,
  cli: CLI_ERROR_CODES,
};

const sourceRoot = join(import.meta.dirname, "..", "src");

function sourceFiles(directory: string): string[] {
  return readdirSync(directory).flatMap((entry) => {
    const path = join(directory, entry);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith(".ts") && !path.endsWith(".test.ts") ? [path] : [];
  });
}

/** The classes of skillsmith errors: `SkillsmithError` and every class under src/ extending one. */
function errorClasses(sources: readonly ts.SourceFile[]): Set<string> {
  const parents = new Map<string, string>();
  for (const source of sources)
    for (const statement of source.statements)
      if (ts.isClassDeclaration(statement) && statement.name !== undefined) {
        const base = statement.heritageClauses?.[0]?.types[0]?.expression.getText(source);
        if (base !== undefined) parents.set(statement.name.text, base);
      }
  const classes = new Set(["SkillsmithError"]);
  for (let grown = true; grown; ) {
    grown = false;
    for (const [name, base] of parents)
      if (classes.has(base) && !classes.has(name)) {
        classes.add(name);
        grown = true;
      }
  }
  return classes;
}

interface ThrownCode {
  readonly code: string;
  readonly where: string;
}

/**
 * Every string literal given as a code: the first argument of `new <error class>(…)` or of
 * `super(…)` in an error class, and `parseInput`'s `code`. (A comparison with `error.code` is
 * left to the type checker: `code` is an `ErrorCode`, so an unregistered literal does not compile,
 * and other libraries' errors have codes of their own, `ENOENT`.)
 */
function thrownCodes(sources: readonly ts.SourceFile[]): ThrownCode[] {
  const classes = errorClasses(sources);
  const found: ThrownCode[] = [];
  for (const source of sources) {
    const add = (node: ts.Node): void => {
      const literals = ts.isConditionalExpression(node) ? [node.whenTrue, node.whenFalse] : [node];
      for (const literal of literals)
        if (ts.isStringLiteralLike(literal)) {
          const line = source.getLineAndCharacterOfPosition(literal.getStart(source)).line + 1;
          found.push({ code: literal.text, where: `${source.fileName}:${line}` });
        }
    };
    let inErrorClass = false;
    const visit = (node: ts.Node): void => {
      if (ts.isClassDeclaration(node)) {
        const outer = inErrorClass;
        inErrorClass = classes.has(node.name?.text ?? "");
        ts.forEachChild(node, visit);
        inErrorClass = outer;
        return;
      }
      if (ts.isNewExpression(node) && classes.has(node.expression.getText(source))) {
        const first = node.arguments?.[0];
        if (first !== undefined) add(first);
      } else if (
        ts.isCallExpression(node) &&
        node.expression.kind === ts.SyntaxKind.SuperKeyword &&
        inErrorClass
      ) {
        const first = node.arguments[0];
        if (first !== undefined) add(first);
      } else if (ts.isCallExpression(node) && node.expression.getText(source) === "parseInput") {
        const options = node.arguments[2];
        if (options !== undefined && ts.isObjectLiteralExpression(options))
          for (const property of options.properties)
            if (ts.isPropertyAssignment(property) && property.name.getText(source) === "code")
              add(property.initializer);
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found;
}

function parsed(path: string, text = readFileSync(path, "utf8")): ts.SourceFile {
  return ts.createSourceFile(path, text, ts.ScriptTarget.Latest, false);
}

describe("error codes", () => {
  it("are registered once each, in their module's registry, in the convention", () => {
    expect(Object.keys(registries)).toEqual([...ERROR_CODE_MODULES]);
    const problems: string[] = [];
    const seen = new Set<string>();
    for (const [module, codes] of Object.entries(registries))
      for (const code of codes) {
        if (!ERROR_CODE_PATTERN.test(code)) problems.push(`${code}: not <module>.<kebab-name>`);
        if (!code.startsWith(`${module}.`)) problems.push(`${code}: registered by ${module}`);
        if (seen.has(code)) problems.push(`${code}: registered twice`);
        seen.add(code);
      }
    expect(problems).toEqual([]);
    expect(seen.size).toBeGreaterThan(300);
  });

  it("thrown under src/ are registered by the module or one it may import", () => {
    const sources = sourceFiles(sourceRoot)
      .filter((path) => !/error-codes\.ts$|error-code-renames\.ts$/.test(path))
      .map((path) => parsed(path));
    const codes = thrownCodes(sources);
    // The scan must see the codes, or the check below proves nothing.
    expect(codes.length).toBeGreaterThan(400);
    const problems = codes.flatMap(({ code, where }) => {
      const module = relative(sourceRoot, where).split(sep)[0] ?? "";
      const visible = [module, ...(MODULE_IMPORTS[module] ?? [])];
      return visible.some((name) => registries[name]?.includes(code))
        ? []
        : [`${relative(sourceRoot, where)}: "${code}" is not registered in ${visible.join(", ")}`];
    });
    expect(problems).toEqual([]);
  });

  it("finds an unregistered code, an old spelling and a code from above the module's layer", () => {
    // Old spellings built from parts, so the error-code codemod leaves this test's data alone.
    const oldSkill = ["skill", "invalid"].join("-");
    const oldManifest = ["run", "manifest", "invalid"].join("-");
    const source = parsed(
      join(sourceRoot, "skill", "example.ts"),
      `class LocalError extends InputError {
         constructor() { super("skill.not-registered-anywhere", "x"); }
       }
       throw new InputError("${oldSkill}", "old spelling");
       throw new UsageError(flag ? "cli.option-invalid" : "skill.skill-invalid", "above skill");
       parseInput(schema, value, { code: "${oldManifest}" });`,
    );
    const codes = thrownCodes([parsed(join(sourceRoot, "core", "errors.ts")), source]);
    expect(codes.map(({ code }) => code)).toEqual([
      "skill.not-registered-anywhere",
      oldSkill,
      "cli.option-invalid",
      "skill.skill-invalid",
      oldManifest,
    ]);
    const registered = new Set<string>([...SKILL_ERROR_CODES, ...CORE_ERROR_CODES]);
    expect(codes.filter(({ code }) => !registered.has(code)).map(({ code }) => code)).toEqual([
      "skill.not-registered-anywhere",
      oldSkill,
      "cli.option-invalid",
      oldManifest,
    ]);
  });

  it("renames every old spelling to a registered code, and reads old spellings as new", () => {
    const all = new Set(Object.values(registries).flat());
    const unregistered = Object.entries(ERROR_CODE_RENAMES).filter(([, to]) => !all.has(to));
    expect(unregistered).toEqual([]);
    // Spellings of the four old styles (kebab, dotted, dotted kebab, upper snake).
    expect(currentErrorCode("lock-timeout")).toBe("core.lock-timeout");
    expect(currentErrorCode("wiki.search.timeout")).toBe("wiki.search-timeout");
    expect(currentErrorCode("model.base-url.missing")).toBe("model.base-url-missing");
    expect(currentErrorCode("SANDBOX_BWRAP_MISSING")).toBe("env.sandbox-bwrap-missing");
    expect(currentErrorCode("core.dependency-missing")).toBe("core.dependency-missing");
    expect(currentErrorCode("not-a-code-anyone-used")).toBe("not-a-code-anyone-used");
  });
});
