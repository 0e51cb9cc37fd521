/**
 * Article connector: HTML → readable article (Mozilla Readability over linkedom) → paragraphs.
 * Paragraphs are the block elements of the readable content in document order: text paragraphs,
 * list items, headings, definition terms (API signatures in generated docs), quotes and code
 * blocks, each whitespace-normalised (code keeps its lines).
 */
import { createRequire } from "node:module";
import { recogniseLicence } from "./licence.js";
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

const BLOCKS = "h1, h2, h3, h4, p, li, dt, pre, blockquote";
const MIN_PARAGRAPH_CHARS = 20;

export interface ReadableArticle {
  readonly title: string;
  readonly paragraphs: readonly string[];
  /** A licence declared by the page (`<meta name="license">` or `<link rel="license">`). */
  readonly declaredLicence: string | null;
}

/**
 * A licence stated in one of the page's first comments, as generated documentation does
 * (texinfo puts the manual's permission notice there): its SPDX id, when recognised.
 */
function commentLicence(html: string): string | null {
  for (const [index, match] of [...html.matchAll(/<!--([\s\S]*?)-->/g)].entries()) {
    if (index >= 3) break;
    const recognised = recogniseLicence(match[1]);
    if (recognised.licence !== null) return recognised.licence;
  }
  return null;
}

export function readArticle(html: string): ReadableArticle {
  const { Readability, parseHTML } = htmlLibraries();
  const { document } = parseHTML(html);
  const declared =
    document
      .querySelector('meta[name="license"], meta[name="dc.rights"], meta[name="DC.rights"]')
      ?.getAttribute("content") ??
    document.querySelector('link[rel="license"], a[rel="license"]')?.getAttribute("href") ??
    commentLicence(html);
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
  // Readability shortens titles at separators such as ":"; a cut inside brackets ("The Basics
  // (libffi: the portable …)" → "the portable …)") is worse than the page's own title.
  const shortened = article?.title?.trim() ?? "";
  const balanced = (shortened.match(/\(/g) ?? []).length === (shortened.match(/\)/g) ?? []).length;
  return {
    title: shortened !== "" && balanced ? shortened : title,
    paragraphs,
    declaredLicence: declared,
  };
}

export function paragraphUnits(article: ReadableArticle): ExtractedUnit[] {
  return article.paragraphs.map((text, index) => ({
    index,
    kind: "paragraph" as const,
    locator: `paragraph ${index}`,
    text,
  }));
}
