/**
 * Article connector: HTML → readable article (Mozilla Readability over linkedom) → paragraphs.
 * Paragraphs are the block elements of the readable content in document order: text paragraphs,
 * list items, headings and code blocks, each whitespace-normalised (code keeps its lines).
 */
import { createRequire } from "node:module";
import type { ExtractedUnit } from "./types.js";

type ReadabilityModule = typeof import("@mozilla/readability");
type LinkedomModule = typeof import("linkedom");

/**
 * Readability and linkedom, loaded on the first article rather than with this module: linkedom
 * alone costs ~0.25 s of start-up that every other wiki command would pay. `require` keeps
 * `readArticle` synchronous (both packages ship CommonJS builds).
 */
function htmlLibraries(): {
  Readability: ReadabilityModule["Readability"];
  parseHTML: LinkedomModule["parseHTML"];
} {
  const require = createRequire(import.meta.url);
  return {
    Readability: (require("@mozilla/readability") as ReadabilityModule).Readability,
    parseHTML: (require("linkedom") as LinkedomModule).parseHTML,
  };
}

const BLOCKS = "h1, h2, h3, h4, p, li, pre, blockquote";
const MIN_PARAGRAPH_CHARS = 20;

export interface ReadableArticle {
  readonly title: string;
  readonly paragraphs: readonly string[];
  /** A licence declared by the page (`<meta name="license">` or `<link rel="license">`). */
  readonly declaredLicence: string | null;
}

export function readArticle(html: string): ReadableArticle {
  const { Readability, parseHTML } = htmlLibraries();
  const { document } = parseHTML(html);
  const declared =
    document
      .querySelector('meta[name="license"], meta[name="dc.rights"], meta[name="DC.rights"]')
      ?.getAttribute("content") ??
    document.querySelector('link[rel="license"], a[rel="license"]')?.getAttribute("href") ??
    null;
  const title = document.querySelector("title")?.textContent?.trim() ?? "";
  // Readability mutates the document it reads, so the licence was read first.
  // biome-ignore lint/suspicious/noExplicitAny: linkedom's Document is DOM-compatible but typed separately
  const article = new Readability(document as any).parse();
  const contentHtml = article?.content ?? document.body?.innerHTML ?? "";
  const { document: content } = parseHTML(
    `<!doctype html><html><body>${contentHtml}</body></html>`,
  );
  const paragraphs: string[] = [];
  for (const element of content.querySelectorAll(BLOCKS)) {
    // A paragraph inside a list item or quote is reported once, by its innermost block.
    if (element.querySelector(BLOCKS) !== null && element.tagName !== "PRE") continue;
    const raw = element.textContent ?? "";
    const text =
      element.tagName === "PRE"
        ? raw.replace(/\s+$/g, "").replace(/^\n+/, "")
        : raw.replace(/\s+/g, " ").trim();
    if (text.length < MIN_PARAGRAPH_CHARS && element.tagName !== "PRE") continue;
    if (text === "") continue;
    paragraphs.push(element.tagName === "PRE" ? `\`\`\`\n${text}\n\`\`\`` : text);
  }
  return { title: article?.title?.trim() || title, paragraphs, declaredLicence: declared };
}

export function paragraphUnits(article: ReadableArticle): ExtractedUnit[] {
  return article.paragraphs.map((text, index) => ({
    index,
    kind: "paragraph" as const,
    locator: `paragraph ${index}`,
    text,
  }));
}
