/**
 * The one YAML reader: the `yaml` package with a line counter, so every problem and every field
 * can be reported with its line. Suites (`bench/suite/yaml.ts`) and skill frontmatter
 * (`skill/parse.ts`) build their checks on it. It never prints: the package's warnings are
 * silenced, problems are returned.
 */
import {
  type Document,
  isMap,
  isScalar,
  isSeq,
  LineCounter,
  type ParsedNode,
  parseDocument,
} from "yaml";

/** One problem found in a YAML file: a syntax error, a duplicate key or a schema violation. */
export interface YamlProblem {
  readonly line?: number;
  /** Dotted path of the field, e.g. `configurations.0.limits.timeoutSeconds`. */
  readonly field?: string;
  readonly message: string;
}

export type PathSegment = string | number;

export interface LocatedDocument {
  readonly document: Document.Parsed;
  readonly lineCounter: LineCounter;
}

export function parseLocated(text: string, uniqueKeys: boolean): LocatedDocument {
  const lineCounter = new LineCounter();
  const document = parseDocument(text, {
    lineCounter,
    uniqueKeys,
    prettyErrors: true,
    // Library code never prints; the package would otherwise warn on the console.
    logLevel: "silent",
  });
  return { document, lineCounter };
}

export function lineAt(lineCounter: LineCounter, offset: number): number {
  return lineCounter.linePos(offset).line;
}

/**
 * The line where `path` is written: the line of the deepest key that exists along it (so an
 * issue about a missing field points at the map that should hold it).
 */
export function lineOfPath(
  located: LocatedDocument,
  path: readonly PathSegment[],
): number | undefined {
  let node: unknown = located.document.contents;
  let line: number | undefined =
    node !== null && isNodeWithRange(node) ? lineAt(located.lineCounter, node.range[0]) : undefined;
  for (const segment of path) {
    if (isMap(node)) {
      const pair = node.items.find(
        (item) => isScalar(item.key) && String(item.key.value) === String(segment),
      );
      if (pair === undefined) return line;
      if (isNodeWithRange(pair.key)) line = lineAt(located.lineCounter, pair.key.range[0]);
      node = pair.value;
    } else if (isSeq(node) && typeof segment === "number") {
      const item = node.items[segment];
      if (item === undefined) return line;
      if (isNodeWithRange(item)) line = lineAt(located.lineCounter, item.range[0]);
      node = item;
    } else {
      return line;
    }
  }
  return line;
}

export function isNodeWithRange(value: unknown): value is ParsedNode {
  return (
    typeof value === "object" &&
    value !== null &&
    "range" in value &&
    Array.isArray((value as { range: unknown }).range)
  );
}

export function syntaxProblems(document: Document.Parsed): YamlProblem[] {
  return document.errors.map((error) => {
    const firstLine = error.message.split("\n")[0] ?? error.message;
    const line = error.linePos?.[0]?.line;
    // The `yaml` package appends " at line N, column M" itself; we report the line separately.
    const message = firstLine.replace(/ at line \d+, column \d+:?$/, "");
    return line === undefined ? { message } : { line, message };
  });
}

/** A YAML file's value, and where each of its fields is written. */
export interface LocatedValue {
  readonly value: unknown;
  /** The line of `path` (see `lineOfPath`); undefined when the file does not say. */
  readonly lineOf: (path: readonly PathSegment[]) => number | undefined;
}

/**
 * YAML text as a plain value, for readers that check its shape themselves (with zod): a syntax
 * error or a key written twice is the first problem, with its line, instead of a value in which
 * the last duplicate silently wins.
 */
export function readYamlValue(
  text: string,
):
  | { readonly ok: true; readonly value: LocatedValue }
  | { readonly ok: false; readonly error: YamlProblem } {
  const located = parseLocated(text, true);
  const problem = syntaxProblems(located.document)[0];
  if (problem !== undefined) return { ok: false, error: problem };
  return {
    ok: true,
    value: {
      value: located.document.toJS() as unknown,
      lineOf: (path) => lineOfPath(located, path),
    },
  };
}
