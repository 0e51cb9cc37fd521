/**
 * The few lines of a verifier's output that say why a run was flagged (the `ModuleNotFoundError`
 * of a collection error, the `Killed` of an out-of-memory run), so a report can show the cause
 * beside the flag without printing kilobytes of traceback. The whole stored output stays in the
 * JSON report and the HTML pair viewer.
 */
import { stripAnsi } from "../../env/index.js";

/** Lines shown per run, and the longest line kept (longer ones are cut with an ellipsis). */
export const EXCERPT_LINES = 4;
export const EXCERPT_LINE_LENGTH = 240;

/**
 * Patterns in the order they are preferred: pytest's `E   ` lines carry the exception itself;
 * then any `SomethingError:` / `SomethingException:` with its message; then the summary lines
 * runners print on failure (collection errors, `Interrupted`, `Killed`, time limits).
 */
const PREFERRED: readonly RegExp[] = [
  /^E {2,}\S/,
  /\b[A-Z][A-Za-z0-9_]*(Error|Exception|Exit)\b:?/,
  /errors? during collection|ERROR collecting|Interrupted:|\bKilled\b|timed out|time limit|out of memory|fork: |Resource temporarily unavailable|No such file or directory|command not found|Permission denied/i,
];

/**
 * Text from a run without terminal control: ANSI colour codes, and every other control character
 * but the tab (a hostile verifier could otherwise retitle, clear or hyperlink the reader's
 * terminal through `bench report`).
 */
export function printable(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are the point.
  return stripAnsi(text).replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, "");
}

function cut(line: string): string {
  return line.length <= EXCERPT_LINE_LENGTH ? line : `${line.slice(0, EXCERPT_LINE_LENGTH - 1)}…`;
}

/**
 * Up to `limit` telling lines of `output`, in the order they appear. Lines matching an earlier
 * pattern win; without any match, the last non-empty lines (where runners print their summary).
 */
export function tellingLines(output: string, limit = EXCERPT_LINES): string[] {
  const lines = output
    .split(/\r?\n/)
    .map(printable)
    // Runners frame headings with rules (`==== ERRORS ====`, `!!!! Interrupted … !!!!`).
    .map((line) => line.trim().replace(/^[=_!*-]{3,}\s*|\s*[=_!*-]{3,}$/g, ""))
    .filter((line) => line !== "");
  const chosen = new Set<number>();
  for (const pattern of PREFERRED) {
    for (let index = 0; index < lines.length && chosen.size < limit; index += 1) {
      if (pattern.test(lines[index] as string)) chosen.add(index);
    }
  }
  if (chosen.size === 0) {
    for (let index = Math.max(0, lines.length - limit); index < lines.length; index += 1)
      chosen.add(index);
  }
  const seen = new Set<string>();
  return [...chosen]
    .sort((left, right) => left - right)
    .map((index) => cut(lines[index] as string))
    .filter((line) => {
      if (seen.has(line)) return false;
      seen.add(line);
      return true;
    });
}

/** The first line of an error message, bounded (attempt errors can hold whole stack traces). */
export function firstLine(text: string): string {
  const line =
    text
      .split(/\r?\n/)
      .map(printable)
      .find((candidate) => candidate.trim() !== "") ?? "";
  return cut(line.trim());
}
