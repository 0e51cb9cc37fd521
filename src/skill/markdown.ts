/**
 * Small Markdown helpers shared by validation (links) and the audit (comments, prose). They
 * are deliberately linear in the input: skills are untrusted, and a regular expression that
 * backtracks on a hostile megabyte-long line would hang the whole run.
 */

/** Lines longer than this are not searched with pattern rules (see `long-line`). */
export const MAX_SCANNED_LINE = 4000;

/**
 * For each line, whether it is a code-fence line or inside a fenced code block (``` or ~~~,
 * closed by a fence of the same character at least as long).
 */
export function fencedLines(lines: readonly string[]): boolean[] {
  let fence: string | undefined;
  return lines.map((line) => {
    const match = /^ {0,3}(`{3,}|~{3,})/.exec(line);
    if (match !== null) {
      const marker = match[1] ?? "";
      if (fence === undefined) fence = marker;
      else if (marker[0] === fence[0] && marker.length >= fence.length) fence = undefined;
      return true;
    }
    return fence !== undefined;
  });
}

/**
 * Replace inline code spans (`` `x` ``, ``` ``x`` ```) with spaces, keeping the length so
 * offsets still point at the same characters. A span opens with a run of backticks and closes
 * with the next run of exactly the same length; unmatched runs are literal text.
 */
export function blankInlineCode(line: string): string {
  const runs: { start: number; length: number }[] = [];
  for (let index = 0; index < line.length; ) {
    if (line[index] !== "`") {
      index++;
      continue;
    }
    let end = index;
    while (line[end] === "`") end++;
    runs.push({ start: index, length: end - index });
    index = end;
  }
  if (runs.length < 2) return line;
  // The next run of the same length after each run, found in one backward pass.
  const nextSame: number[] = new Array<number>(runs.length).fill(-1);
  const latestByLength = new Map<number, number>();
  for (let run = runs.length - 1; run >= 0; run--) {
    const length = runs[run]?.length ?? 0;
    nextSame[run] = latestByLength.get(length) ?? -1;
    latestByLength.set(length, run);
  }
  let result = "";
  let cursor = 0;
  for (let run = 0; run < runs.length; ) {
    const close = nextSame[run] ?? -1;
    const open = runs[run];
    const closing = runs[close];
    if (close === -1 || open === undefined || closing === undefined) {
      run++;
      continue;
    }
    const end = closing.start + closing.length;
    result += line.slice(cursor, open.start) + " ".repeat(end - open.start);
    cursor = end;
    run = close + 1;
  }
  return result + line.slice(cursor);
}

/** 1-based line of a character offset, by binary search over precomputed line starts. */
export function lineLocator(text: string): (offset: number) => number {
  const starts = [0];
  for (let index = 0; index < text.length; index++) {
    const character = text[index];
    if (character === "\n" || (character === "\r" && text[index + 1] !== "\n")) {
      starts.push(index + 1);
    }
  }
  return (offset) => {
    let low = 0;
    let high = starts.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if ((starts[middle] ?? 0) <= offset) low = middle;
      else high = middle - 1;
    }
    return low + 1;
  };
}
