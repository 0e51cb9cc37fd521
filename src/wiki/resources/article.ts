/**
 * Article connector: HTML → readable article (Mozilla Readability over linkedom) → paragraphs.
 * Paragraphs are the block elements of the readable content in document order: text paragraphs,
 * list items, headings, definition terms (API signatures in generated docs), quotes and code
 * blocks, each whitespace-normalised (code keeps its lines).
 */
import { assertInstalled, requireOptional } from "../../core/optional.js";
import { fenceLanguage } from "./document.js";
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
  const feature = "article resources in the wiki (reading HTML pages)";
  assertInstalled(["@mozilla/readability", "linkedom"], feature);
  return {
    Readability: requireOptional<ReadabilityModule>("@mozilla/readability", feature).Readability,
    parseHTML: requireOptional<LinkedomModule>("linkedom", feature).parseHTML,
  };
}

const BLOCKS = "h1, h2, h3, h4, p, li, dt, pre, blockquote";
const MIN_PARAGRAPH_CHARS = 20;

export interface ReadableArticle {
  readonly title: string;
  readonly paragraphs: readonly string[];
  /** Per paragraph: the headings above it (outermost first) and, for a code block, its language. */
  readonly places?: readonly { headings: readonly string[]; language?: string }[];
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
  // Classes kept: a code block's language is in its class (`language-css`, `brush: js`).
  // biome-ignore lint/suspicious/noExplicitAny: linkedom's Document is DOM-compatible but typed separately
  const article = new Readability(document as any, { keepClasses: true }).parse();
  const contentHtml = article?.content ?? document.body?.innerHTML ?? "";
  const { document: content } = parseHTML(
    `<!doctype html><html><body>${contentHtml}</body></html>`,
  );
  const paragraphs: string[] = [];
  const places: { headings: string[]; language?: string }[] = [];
  const open: { level: number; text: string }[] = [];
  for (const element of content.querySelectorAll(BLOCKS)) {
    // A paragraph inside a list item or quote is reported once, by its innermost block.
    if (element.querySelector(BLOCKS) !== null && element.tagName !== "PRE") continue;
    const raw = element.textContent ?? "";
    const text =
      element.tagName === "PRE"
        ? raw.replace(/\s+$/g, "").replace(/^\n+/, "")
        : raw.replace(/\s+/g, " ").trim();
    const level = /^H([1-4])$/.exec(element.tagName)?.[1];
    const headings = open.map((each) => each.text);
    if (level !== undefined && text !== "") {
      while ((open.at(-1)?.level ?? 0) >= Number(level)) open.pop();
      open.push({ level: Number(level), text });
    }
    if (text.length < MIN_PARAGRAPH_CHARS && element.tagName !== "PRE") continue;
    if (text === "") continue;
    const language = element.tagName === "PRE" ? codeLanguage(element) : undefined;
    paragraphs.push(element.tagName === "PRE" ? `\`\`\`${language ?? ""}\n${text}\n\`\`\`` : text);
    places.push({ headings, ...(language === undefined ? {} : { language }) });
  }
  // Readability shortens titles at separators such as ":"; a cut inside brackets ("The Basics
  // (libffi: the portable …)" → "the portable …)") is worse than the page's own title.
  const shortened = article?.title?.trim() ?? "";
  const balanced = (shortened.match(/\(/g) ?? []).length === (shortened.match(/\)/g) ?? []).length;
  return {
    title: shortened !== "" && balanced ? shortened : title,
    paragraphs,
    places,
    declaredLicence: declared,
  };
}

/** A code block's language from its class (`language-css`, `lang-js`, `brush: js`), if any. */
function codeLanguage(element: {
  getAttribute(name: string): string | null;
  querySelector(selector: string): { getAttribute(name: string): string | null } | null;
}): string | undefined {
  const classes = `${element.getAttribute("class") ?? ""} ${element.querySelector("code")?.getAttribute("class") ?? ""}`;
  const match = /(?:^|\s)(?:language|lang)-([\w+-]+)|brush:\s*([\w+-]+)/i.exec(classes);
  const word = match?.[1] ?? match?.[2];
  return word === undefined ? undefined : fenceLanguage(word);
}

/**
 * One unit per paragraph; a code block is a `code-block` unit with its language (its text
 * without the fence, ready to run). Locators add the heading path: `paragraph 4 § Usage › Sizes`.
 */
export function paragraphUnits(article: ReadableArticle): ExtractedUnit[] {
  return article.paragraphs.map((text, index) => {
    const place = article.places?.[index];
    const headings = place?.headings ?? [];
    const locator = `paragraph ${index}${headings.length === 0 ? "" : ` § ${headings.join(" › ")}`}`;
    const fenced = /^```[^\n]*\n([\s\S]*)\n```$/.exec(text);
    if (fenced === null) return { index, kind: "paragraph" as const, locator, text };
    return {
      index,
      kind: "code-block" as const,
      locator: `${locator} (code block${place?.language === undefined ? "" : `, ${place.language}`})`,
      text: fenced[1] ?? "",
      ...(place?.language === undefined ? {} : { language: place.language }),
    };
  });
}

/** An example page as one unit: the whole document, for the render gate. */
export function examplePageUnit(html: string, index: number): ExtractedUnit {
  return {
    index,
    kind: "code-block",
    locator: "whole page (html example)",
    text: html,
    language: "html",
  };
}
