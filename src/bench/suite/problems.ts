/**
 * The problems of a suite being validated (path, line, field, severity) and the one way its
 * text files are read into them: size-capped, BOM stripped, every failure a problem.
 */
import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { pathKind } from "./files.js";
import type { SuiteProblem } from "./types.js";

/** Bytes we are willing to read from one YAML or Markdown file of a suite. */
export const MAX_TEXT_BYTES = 4 * 1024 * 1024;

/** Collects problems with paths shown as the suite folder joined with the relative path. */
export class Problems {
  readonly list: SuiteProblem[] = [];
  constructor(private readonly displayRoot: string) {}

  display(relativePath: string): string {
    return relativePath === "" ? this.displayRoot : join(this.displayRoot, relativePath);
  }

  error(relativePath: string, message: string, extra: { line?: number; field?: string } = {}) {
    this.add("error", relativePath, message, extra);
  }

  warning(relativePath: string, message: string, extra: { line?: number; field?: string } = {}) {
    this.add("warning", relativePath, message, extra);
  }

  private add(
    severity: SuiteProblem["severity"],
    relativePath: string,
    message: string,
    extra: { line?: number; field?: string },
  ) {
    this.list.push({
      path: this.display(relativePath),
      ...(extra.line === undefined ? {} : { line: extra.line }),
      ...(extra.field === undefined ? {} : { field: extra.field }),
      message,
      severity,
    });
  }

  get errorCount(): number {
    return this.list.filter((problem) => problem.severity === "error").length;
  }
}

export async function readText(
  root: string,
  relativePath: string,
  problems: Problems,
  what: string,
): Promise<string | undefined> {
  const path = join(root, relativePath);
  const kind = await pathKind(path);
  if (kind === "missing") {
    problems.error(relativePath, `missing ${what}`);
    return undefined;
  }
  if (kind !== "file") {
    problems.error(relativePath, `expected ${what} to be a file`);
    return undefined;
  }
  const info = await stat(path);
  if (info.size > MAX_TEXT_BYTES) {
    problems.error(relativePath, `${what} is larger than ${MAX_TEXT_BYTES} bytes`);
    return undefined;
  }
  try {
    return (await readFile(path, "utf8")).replace(/^\uFEFF/, "");
  } catch (error) {
    problems.error(relativePath, `cannot read ${what}: ${(error as Error).message}`);
    return undefined;
  }
}

/** The errors recorded since the list had `index` entries (what one part added). */
export function errorsSince(problems: Problems, index: number): SuiteProblem[] {
  return problems.list.slice(index).filter((problem) => problem.severity === "error");
}
