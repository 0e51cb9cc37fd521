import { isMap, isScalar, isSeq, type Node } from "yaml";
import type { z } from "zod";
import {
  isNodeWithRange,
  lineAt,
  lineOfPath,
  type PathSegment,
  parseLocated,
  syntaxProblems,
  type YamlProblem,
} from "../../core/yaml.js";

export type { PathSegment, YamlProblem };

/**
 * `{ line }` when the line is known, `{}` otherwise: a problem without a line has no `line`
 * key at all (what `exactOptionalPropertyTypes` asks for, and what JSON output showed before).
 */
export function lineField(line: number | undefined): { readonly line?: number } {
  return line === undefined ? {} : { line };
}

export type YamlCheck<T> =
  | {
      readonly ok: true;
      readonly value: T;
      readonly lineOf: (path: readonly PathSegment[]) => number | undefined;
    }
  | {
      readonly ok: false;
      readonly problems: YamlProblem[];
      /** The parsed but unchecked data (absent on syntax errors), for checks across fields. */
      readonly raw?: unknown;
      /** Line of a path in the source. */
      readonly lineOf: (path: readonly PathSegment[]) => number | undefined;
    };

/**
 * Parse YAML text strictly (duplicate keys are errors) and check it against a zod schema,
 * returning every problem with its line rather than stopping at the first.
 */
export function checkYaml<Schema extends z.ZodType>(
  text: string,
  schema: Schema,
): YamlCheck<z.output<Schema>> {
  const located = parseLocated(text, true);
  const problems = syntaxProblems(located.document);
  const lineOf = (path: readonly PathSegment[]) => lineOfPath(located, path);
  if (problems.length > 0) return { ok: false, problems, lineOf };
  const raw: unknown = located.document.toJS();
  const parsed = schema.safeParse(raw);
  if (parsed.success) return { ok: true, value: parsed.data, lineOf };
  for (const issue of parsed.error.issues) {
    const path = issue.path.filter(
      (segment): segment is PathSegment =>
        typeof segment === "string" || typeof segment === "number",
    );
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys) {
        const fieldPath = [...path, key];
        problems.push({
          ...lineField(lineOfPath(located, fieldPath)),
          field: fieldPath.join("."),
          message: `unknown field "${key}"`,
        });
      }
      continue;
    }
    problems.push({
      ...lineField(lineOfPath(located, path)),
      ...(path.length > 0 ? { field: path.join(".") } : {}),
      message: issue.message,
    });
  }
  return { ok: false, problems, raw, lineOf };
}

/** A key written twice in one map, and what we did about it. */
export interface DuplicateKey {
  readonly key: string;
  /** Dotted path of the map that holds the key. */
  readonly parent: string;
  readonly firstLine: number;
  readonly secondLine: number;
  /** `merged`: both values were maps and were combined; `conflict`: a value was lost. */
  readonly resolution: "merged" | "conflict";
  readonly detail?: string;
}

export interface LenientYaml {
  readonly value: unknown;
  readonly duplicates: DuplicateKey[];
  readonly problems: YamlProblem[];
  /** Line of a path in the source, for reporting. */
  readonly lineOf: (path: readonly PathSegment[]) => number | undefined;
}

/**
 * Parse YAML written by others, tolerating duplicate keys: when both values of a repeated key
 * are maps they are merged (a parser that keeps only the last silently drops the first — the
 * public SWE-Skills-Bench config repeats `limits:` for resource and interaction limits); when
 * the same leaf is written twice with different values, the last wins and it is reported.
 */
export function parseYamlMergingDuplicates(text: string): LenientYaml {
  const located = parseLocated(text, false);
  const duplicates: DuplicateKey[] = [];
  const problems = syntaxProblems(located.document);
  const line = (node: unknown): number =>
    isNodeWithRange(node) ? lineAt(located.lineCounter, node.range[0]) : 0;

  const convert = (node: unknown, path: string): unknown => {
    if (isMap(node)) {
      const result: Record<string, unknown> = {};
      const keyLines = new Map<string, number>();
      for (const pair of node.items) {
        const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
        const childPath = path === "" ? key : `${path}.${key}`;
        const value = convert(pair.value, childPath);
        const firstLine = keyLines.get(key);
        if (firstLine === undefined || !(key in result)) {
          result[key] = value;
          keyLines.set(key, line(pair.key));
          continue;
        }
        const conflicts: string[] = [];
        const previous = result[key];
        if (isPlainObject(previous) && isPlainObject(value)) {
          result[key] = mergeMaps(previous, value, childPath, conflicts);
        } else if (!sameValue(previous, value)) {
          result[key] = value;
          conflicts.push(
            `${childPath}: ${JSON.stringify(previous)} replaced by ${JSON.stringify(value)}`,
          );
        }
        duplicates.push({
          key,
          parent: path,
          firstLine,
          secondLine: line(pair.key),
          resolution: conflicts.length === 0 ? "merged" : "conflict",
          ...(conflicts.length > 0 ? { detail: conflicts.join("; ") } : {}),
        });
      }
      return result;
    }
    if (isSeq(node)) {
      return node.items.map((item, index) => convert(item, `${path}.${index}`));
    }
    if (isScalar(node)) return node.value;
    if (node === null || node === undefined) return null;
    // Aliases and other rare nodes: let the library resolve them.
    return (node as Node).toJSON();
  };

  const value = convert(located.document.contents, "");
  return { value, duplicates, problems, lineOf: (path) => lineOfPath(located, path) };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function sameValue(left: unknown, right: unknown): boolean {
  return JSON.stringify(left) === JSON.stringify(right);
}

function mergeMaps(
  first: Record<string, unknown>,
  second: Record<string, unknown>,
  path: string,
  conflicts: string[],
): Record<string, unknown> {
  const result: Record<string, unknown> = { ...first };
  for (const [key, value] of Object.entries(second)) {
    const previous = result[key];
    if (!(key in result)) {
      result[key] = value;
    } else if (isPlainObject(previous) && isPlainObject(value)) {
      result[key] = mergeMaps(previous, value, `${path}.${key}`, conflicts);
    } else {
      if (!sameValue(previous, value)) {
        conflicts.push(
          `${path}.${key}: ${JSON.stringify(previous)} replaced by ${JSON.stringify(value)}`,
        );
      }
      result[key] = value;
    }
  }
  return result;
}
