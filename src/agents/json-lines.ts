/** Reading the JSON-lines logs agent CLIs print (Claude Code's stream-json, Codex's JSONL). */

/** One non-empty line of a log: its 1-based number, its text as printed, its parsed value. */
export interface JsonLine {
  readonly lineNumber: number;
  readonly text: string;
  /** Undefined when the line is not JSON: the caller's schema check then reports it. */
  readonly value: unknown;
}

/** The parsed value of `text`, or undefined when it is not JSON (never throws). */
export function parseJsonOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    // Not JSON: undefined fails every caller's schema, which reports the line with its number.
    return undefined;
  }
}

/** The non-empty lines of a JSON-lines log, each parsed. */
export function* jsonLines(log: string): Generator<JsonLine> {
  for (const [index, text] of log.split("\n").entries()) {
    const line = text.trim();
    if (line === "") continue;
    yield { lineNumber: index + 1, text, value: parseJsonOrUndefined(line) };
  }
}
