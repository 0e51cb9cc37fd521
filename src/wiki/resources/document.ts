/**
 * Tutorial material as units. A README, a docs page or a demo page teaches through its code
 * blocks and examples; a connector that keeps only prose paragraphs leaves a tutorial's examples
 * with nothing to anchor to. Here a Markdown document yields a unit per fenced code block and per
 * prose paragraph, each located by its heading path (`README.md § Usage › Integer humanization`);
 * an HTML page yields its code blocks with their heading paths and, when the page is an example
 * itself (markup with style or drawing), the whole page as an `html` example for the render gate.
 */
import type { ExtractedUnit } from "./types.js";

/** Info-string languages → the languages the gates run (the rest stay as written). */
const FENCE_LANGUAGES: Readonly<Record<string, string>> = {
  py: "python",
  python3: "python",
  pycon: "python",
  ipython: "python",
  sh: "bash",
  shell: "bash",
  console: "bash",
  shell_session: "bash",
  zsh: "bash",
  js: "javascript",
  mjs: "javascript",
  node: "javascript",
  jsx: "javascript",
  ts: "typescript",
  htm: "html",
  xhtml: "html",
  xml: "xml",
  "image/svg+xml": "svg",
};

export function fenceLanguage(info: string): string | undefined {
  const word =
    info
      .trim()
      .split(/[\s{,]/)[0]
      ?.toLowerCase() ?? "";
  if (word === "") return undefined;
  return FENCE_LANGUAGES[word] ?? word;
}

const MIN_PARAGRAPH_CHARS = 20;

function headingLocator(file: string, headings: readonly string[]): string {
  return headings.length === 0 ? file : `${file} § ${headings.join(" › ")}`;
}

/**
 * The units of a Markdown document in document order: fenced code blocks (`code-block`, with
 * the fence's language) and prose paragraphs (`paragraph`), each located by its heading path.
 * An unclosed fence runs to the end, as CommonMark reads it. Paragraphs keep their raw text
 * (an HTML comment stays in it), so what a reader does not see is still audited.
 */
export function markdownUnits(text: string, file: string, firstIndex = 0): ExtractedUnit[] {
  const units: ExtractedUnit[] = [];
  const open: { level: number; text: string }[] = [];
  let headings: string[] = [];
  const lines = text.replace(/\r\n?/g, "\n").split("\n");
  let paragraph: string[] = [];
  let blockNumber = 0;
  const push = (unit: Omit<ExtractedUnit, "index">) =>
    units.push({ index: firstIndex + units.length, ...unit });
  const flush = () => {
    const body = paragraph.join("\n").trim();
    paragraph = [];
    if (body.length < MIN_PARAGRAPH_CHARS) return;
    push({ kind: "paragraph", locator: headingLocator(file, headings), text: body });
  };
  for (let index = 0; index < lines.length; index += 1) {
    const line = lines[index] ?? "";
    const fence = /^ {0,3}(`{3,}|~{3,})(.*)$/.exec(line);
    if (fence !== null) {
      flush();
      const marker = fence[1] ?? "```";
      const language = fenceLanguage(fence[2] ?? "");
      const body: string[] = [];
      index += 1;
      while (index < lines.length) {
        const inner = lines[index] ?? "";
        const closing = new RegExp(
          `^ {0,3}${marker[0] === "`" ? "`" : "~"}{${marker.length},}\\s*$`,
        );
        if (closing.test(inner)) break;
        body.push(inner);
        index += 1;
      }
      blockNumber += 1;
      const code = body.join("\n");
      if (code.trim() === "") continue;
      push({
        kind: "code-block",
        locator: `${headingLocator(file, headings)}, code block ${blockNumber}${language === undefined ? "" : ` (${language})`}`,
        text: code,
        ...(language === undefined ? {} : { language }),
      });
      continue;
    }
    const heading = /^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading !== null) {
      flush();
      const level = (heading[1] ?? "#").length;
      while ((open.at(-1)?.level ?? 0) >= level) open.pop();
      open.push({ level, text: (heading[2] ?? "").trim() });
      headings = open.map((each) => each.text);
      continue;
    }
    if (line.trim() === "") flush();
    else paragraph.push(line);
  }
  flush();
  return units;
}

/** The document's title: its first level-1 heading, else the first heading. */
export function markdownTitle(text: string): string {
  const first =
    /^ {0,3}#\s+(.+?)\s*#*\s*$/m.exec(text) ?? /^ {0,3}#{1,6}\s+(.+?)\s*#*\s*$/m.exec(text);
  return first?.[1] ?? "";
}

/** Prose paragraphs at or above which a styled page is an article, not an example. */
export const EXAMPLE_PAGE_MAX_PARAGRAPHS = 3;

/**
 * True when an HTML document is an example page: it has markup with styling or drawing (a
 * `<style>` block, an inline `<svg>` or `<canvas>`, or `style` attributes) and little prose
 * (fewer than 3 readable paragraphs) — what MDN's demo pages are — as opposed to an article
 * whose value is its prose (a manual page with a stylesheet is still an article).
 */
export function isExamplePage(html: string, proseParagraphs = 0): boolean {
  return (
    proseParagraphs < EXAMPLE_PAGE_MAX_PARAGRAPHS &&
    /<style[\s>]|<svg[\s>]|<canvas[\s>]|\sstyle\s*=\s*["']/i.test(html)
  );
}
