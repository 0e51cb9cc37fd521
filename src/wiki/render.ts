/**
 * The executability gate for HTML, CSS and SVG: the code is rendered in headless Chromium
 * (Debian's, through playwright-core; `src/env/browser.ts`) with no network, and is executable
 * when it loads without console errors or page errors, requests nothing outside itself, and
 * lays out something visible. A screenshot of the render becomes the entry's visual modality.
 *
 * What is rendered:
 * - html: the code is the page (scripts run).
 * - css: a page whose body is the sample input (HTML markup to style; a fixed sample page when
 *   there is none) links the code as its stylesheet; scripts are off. The stylesheet must parse
 *   into at least one rule and change the computed style of at least one element of the page.
 * - svg: the code is the document (image/svg+xml); scripts are off. It must parse as XML with
 *   an `<svg>` root in the SVG namespace.
 * The page lives at `http://skill.invalid/` (a name that can never resolve). Every request other
 * than the page itself (and its stylesheet, for CSS) is aborted and fails the gate; data: URLs
 * never leave the browser. Layout is read with the DevTools protocol (`DOMSnapshot`), not by
 * scripts in the page, so a page cannot fake it.
 */
import type { Browser, BrowserContext, Page } from "playwright-core";
import { blockRequests, findChromium, launchIsolatedChromium } from "../env/browser.js";
import type { RunLimits, RunOutcome } from "./gates.js";

export const RENDERED_LANGUAGES = ["html", "css", "svg"] as const;
export type RenderedLanguage = (typeof RENDERED_LANGUAGES)[number];

export function isRenderedLanguage(language: string): language is RenderedLanguage {
  return (RENDERED_LANGUAGES as readonly string[]).includes(language);
}

const ORIGIN = "http://skill.invalid";
const PAGE_PATH: Readonly<Record<RenderedLanguage, string>> = {
  html: "/index.html",
  css: "/index.html",
  svg: "/index.svg",
};
const STYLESHEET_PATH = "/skill.css";
/** Late errors (a timer after `load`) still count: the page is watched this long after it loads. */
const SETTLE_MS = 150;
/** The target of a `<meta http-equiv="refresh" content="N; url=…">` in a page, if any. */
export function metaRefreshTarget(html: string): string | undefined {
  for (const tag of html.match(/<meta\b[^>]*>/gi) ?? []) {
    if (!/http-equiv\s*=\s*["']?refresh\b/i.test(tag)) continue;
    const target = /content\s*=\s*["'][^"']*?url\s*=\s*['"]?([^"'>\s;]+)/i.exec(tag)?.[1];
    if (target !== undefined) return target;
  }
  return undefined;
}
/** Full-page screenshots stop at this many viewport heights. */
const MAX_SCREENSHOT_VIEWPORTS = 3;

/** The page a stylesheet is tried on when the skill gives no sample markup. */
export const SAMPLE_PAGE_BODY = `<header><nav><a href="#a">Home</a> <a href="#b">Guides</a> <a href="#c">About</a></nav></header>
<main>
<h1>Sample heading</h1>
<p>A paragraph of text with <a href="#d">a link</a>, <strong>strong</strong> and <em>emphasised</em> words.</p>
<ul><li>First item</li><li>Second item</li><li>Third item</li></ul>
<div class="container"><div class="item">One</div><div class="item">Two</div><div class="item">Three</div></div>
<form><label for="name">Name</label> <input id="name" type="text"> <button type="submit">Send</button></form>
<table><tr><th>Key</th><th>Value</th></tr><tr><td>a</td><td>1</td></tr></table>
</main>
<footer><p>Footer text</p></footer>`;

export interface RendererOptions {
  /** The Chromium binary; default `findChromium()` (SKILLSMITH_CHROMIUM, then /usr/bin/chromium…). */
  readonly executablePath?: string;
  readonly viewport?: { readonly width: number; readonly height: number };
  /** Cap of each page's JavaScript heap (default 512 MiB, the wiki's exec_memory_bytes). */
  readonly memoryBytes?: number;
  readonly env?: Readonly<Record<string, string | undefined>>;
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

interface LayoutBox {
  readonly node: string;
  readonly width: number;
  readonly height: number;
}

/**
 * Layout boxes and content height of the page, from the browser's own snapshot and metrics
 * (DevTools protocol), not from scripts in the page.
 */
async function pageLayout(
  context: BrowserContext,
  page: Page,
): Promise<{ boxes: LayoutBox[]; contentHeight: number }> {
  const session = await context.newCDPSession(page);
  try {
    const snapshot = (await session.send("DOMSnapshot.captureSnapshot", {
      computedStyles: [],
    })) as unknown as {
      documents: {
        nodes: { nodeName?: number[] };
        layout: { nodeIndex: number[]; bounds: number[][] };
      }[];
      strings: string[];
    };
    const metrics = (await session.send("Page.getLayoutMetrics")) as unknown as {
      cssContentSize?: { height?: number };
    };
    const document = snapshot.documents[0];
    const boxes =
      document === undefined
        ? []
        : document.layout.nodeIndex.map((nodeIndex, position) => {
            const bounds = document.layout.bounds[position] ?? [];
            return {
              node: snapshot.strings[document.nodes.nodeName?.[nodeIndex] ?? -1] ?? "",
              width: bounds[2] ?? 0,
              height: bounds[3] ?? 0,
            };
          });
    return { boxes, contentHeight: Math.ceil(metrics.cssContentSize?.height ?? 0) };
  } finally {
    await session.detach().catch(() => {});
  }
}

/*
 * Scripts evaluated in pages whose own scripts are off (SVG, CSS), as text: the library is
 * compiled without the DOM's types.
 */
const SVG_DOCUMENT_SCRIPT = `(() => ({
  namespace: document.documentElement ? document.documentElement.namespaceURI : null,
  root: document.documentElement ? document.documentElement.localName : null,
  error: (() => {
    const found = document.getElementsByTagNameNS("*", "parsererror")[0];
    return found ? (found.textContent || "").trim() : null;
  })(),
}))()`;

/** Rules of the skill's stylesheet, and how many elements' computed styles it changes. */
const STYLESHEET_EFFECT_SCRIPT = `(() => {
  const sheet = [...document.styleSheets].find((each) => (each.href || "").endsWith("${STYLESHEET_PATH}"));
  if (sheet === undefined) return { rules: -1, changed: 0 };
  const elements = [document.body, ...document.body.querySelectorAll("*")];
  const styles = () => elements.map((element) => {
    const style = getComputedStyle(element);
    return [...style].map((name) => name + ":" + style.getPropertyValue(name)).join(";");
  });
  const withSheet = styles();
  sheet.disabled = true;
  const without = styles();
  sheet.disabled = false;
  return {
    rules: sheet.cssRules.length,
    changed: withSheet.filter((value, index) => value !== without[index]).length,
  };
})()`;

/** Boxes that show something: not the document, its root element or the body. */
function visibleBoxes(boxes: readonly LayoutBox[], language: RenderedLanguage): LayoutBox[] {
  const frame =
    language === "svg" ? new Set(["#document", "svg"]) : new Set(["#document", "HTML", "BODY"]);
  let rootSeen = false;
  return boxes.filter((box) => {
    if (language === "svg" && box.node.toLowerCase() === "svg" && !rootSeen) {
      rootSeen = true;
      return false;
    }
    if (language !== "svg" && frame.has(box.node.toUpperCase())) return false;
    if (box.node === "#document") return false;
    return box.width >= 1 && box.height >= 1;
  });
}

function networkProblem(blocked: readonly string[]): string {
  const distinct = [...new Set(blocked)];
  return `requested the network (blocked): ${distinct.slice(0, 3).join(", ")}${distinct.length > 3 ? `, … (${distinct.length} URLs)` : ""}`;
}

/**
 * Renders HTML, CSS and SVG in one headless Chromium, launched on first use and shared by the
 * build's candidates (each in a fresh browser context, so nothing carries over); `close()` ends
 * it. Without Chromium every run is `unavailable`: "unverified: chromium not found".
 */
export class BrowserRenderer {
  private browser: Promise<Browser> | undefined;
  private readonly executablePath: string | undefined;
  private readonly viewport: { readonly width: number; readonly height: number };
  private readonly memoryBytes: number;

  constructor(options: RendererOptions = {}) {
    this.executablePath = options.executablePath ?? findChromium(options.env);
    this.viewport = options.viewport ?? { width: 1280, height: 800 };
    this.memoryBytes = options.memoryBytes ?? 512 * 1024 * 1024;
  }

  get available(): boolean {
    return this.executablePath !== undefined;
  }

  async run(code: string, language: string, input: string, limits: RunLimits): Promise<RunOutcome> {
    if (!isRenderedLanguage(language))
      return { status: "unavailable", detail: `no renderer for ${language} code` };
    if (this.executablePath === undefined)
      return { status: "unavailable", detail: "unverified: chromium not found" };
    let browser: Browser;
    try {
      this.browser ??= launchIsolatedChromium({
        executablePath: this.executablePath,
        memoryBytes: this.memoryBytes,
      });
      browser = await this.browser;
    } catch (error) {
      this.browser = undefined;
      return {
        status: "unavailable",
        detail: `unverified: ${error instanceof Error ? error.message : String(error)}`,
      };
    }
    const context = await browser.newContext({
      viewport: this.viewport,
      javaScriptEnabled: language === "html",
      serviceWorkers: "block",
      acceptDownloads: false,
    });
    try {
      return await this.renderIn(context, code, language, input, limits);
    } finally {
      // A page stuck in a script can keep its context from closing; then the browser goes.
      await withTimeout(context.close(), 5_000, "closing the page").catch(async () => {
        const stuck = this.browser;
        this.browser = undefined;
        await (await stuck)?.close().catch(() => {});
      });
    }
  }

  private async renderIn(
    context: BrowserContext,
    code: string,
    language: RenderedLanguage,
    input: string,
    limits: RunLimits,
  ): Promise<RunOutcome> {
    const blocked: string[] = [];
    const errors: string[] = [];
    await blockRequests(context, { allowed: () => false, onBlocked: (url) => blocked.push(url) });
    // Routes registered later are asked first: the page (and stylesheet) are answered here.
    const pageUrl = `${ORIGIN}${PAGE_PATH[language]}`;
    const body =
      language === "css"
        ? `<!doctype html><html><head><meta charset="utf-8"><title>stylesheet check</title><link rel="stylesheet" href="${STYLESHEET_PATH}"></head><body>${input.trim() === "" ? SAMPLE_PAGE_BODY : input}</body></html>`
        : code;
    await context.route(pageUrl, (route) =>
      route.fulfill({
        status: 200,
        contentType: language === "svg" ? "image/svg+xml" : "text/html; charset=utf-8",
        body,
      }),
    );
    if (language === "css")
      await context.route(`${ORIGIN}${STYLESHEET_PATH}`, (route) =>
        route.fulfill({ status: 200, contentType: "text/css; charset=utf-8", body: code }),
      );
    const page = await context.newPage();
    page.on("console", (message) => {
      // The aborts of blocked requests are reported under "requested the network" instead.
      if (message.type() === "error" && !/ERR_BLOCKED_BY_CLIENT/.test(message.text()))
        errors.push(message.text());
    });
    page.on("pageerror", (error) => errors.push(error.message));
    const started = performance.now();
    try {
      await page.goto(pageUrl, { waitUntil: "load", timeout: limits.timeoutMs });
    } catch (error) {
      const timedOut = error instanceof Error && error.name === "TimeoutError";
      return {
        status: "failed",
        detail: timedOut
          ? `the page did not finish loading within ${limits.timeoutMs} ms`
          : `the page did not load: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}`,
      };
    }
    try {
      return await this.inspect(context, page, code, language, input, limits, {
        blocked,
        errors,
        started,
      });
    } catch (error) {
      // A script still running after `load` (an endless loop in a timer) stops the page from
      // answering: that page does not render.
      return {
        status: "failed",
        detail: `${language}: the page stopped answering: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}${blocked.length === 0 ? "" : `; ${networkProblem(blocked)}`}`,
      };
    }
  }

  private async inspect(
    context: BrowserContext,
    page: Page,
    code: string,
    language: RenderedLanguage,
    input: string,
    limits: RunLimits,
    seen: { blocked: string[]; errors: string[]; started: number },
  ): Promise<RunOutcome> {
    const { blocked, errors, started } = seen;
    await page.waitForTimeout(SETTLE_MS);
    const step = <T>(promise: Promise<T>, what: string) =>
      withTimeout(promise, limits.timeoutMs, what);

    const problems: string[] = [];
    // A delayed refresh would navigate away after the page was inspected; it is read from the
    // source instead of waited for.
    const refresh = language === "html" ? metaRefreshTarget(code) : undefined;
    if (refresh !== undefined)
      problems.push(`schedules a navigation away (meta refresh to ${refresh.slice(0, 120)})`);
    if (language === "svg") {
      const parsed = await step(
        page.evaluate(SVG_DOCUMENT_SCRIPT) as Promise<{
          namespace: string | null;
          root: string | null;
          error: string | null;
        }>,
        "reading the document",
      );
      if (parsed.error !== null)
        problems.push(`the SVG does not parse: ${parsed.error.replace(/\s+/g, " ").slice(0, 200)}`);
      else if (parsed.namespace !== "http://www.w3.org/2000/svg" || parsed.root !== "svg")
        problems.push(
          `the document's root is <${parsed.root ?? "none"}>, not an SVG <svg> element`,
        );
    }
    if (language === "css") {
      const effect = await step(
        page.evaluate(STYLESHEET_EFFECT_SCRIPT) as Promise<{ rules: number; changed: number }>,
        "comparing styles",
      );
      if (effect.rules < 0) problems.push("the stylesheet was not loaded");
      else if (effect.rules === 0) problems.push("the stylesheet parses into no rule");
      else if (effect.changed === 0)
        problems.push(
          `none of its ${effect.rules} rules changes the computed style of any element of the ${input.trim() === "" ? "sample page" : "sample markup"}`,
        );
    }
    const layout = await step(pageLayout(context, page), "reading the layout");
    const boxes = visibleBoxes(layout.boxes, language);
    const height = layout.contentHeight;
    if (boxes.length === 0) problems.push("the layout is empty (no box with a visible size)");
    if (errors.length > 0)
      problems.push(
        `${errors.length} console error${errors.length === 1 ? "" : "s"}: ${errors
          .slice(0, 3)
          .map((each) => each.slice(0, 160))
          .join(" | ")}`,
      );
    if (blocked.length > 0) problems.push(networkProblem(blocked));
    // SVG documents have no scrolling body to stitch a full page from: their viewport is shot.
    const screenshot = await step(
      language === "svg"
        ? page.screenshot({ type: "png", timeout: limits.timeoutMs })
        : page.screenshot({
            type: "png",
            fullPage: true,
            clip: {
              x: 0,
              y: 0,
              width: this.viewport.width,
              height: Math.max(
                this.viewport.height,
                Math.min(height, this.viewport.height * MAX_SCREENSHOT_VIEWPORTS),
              ),
            },
            timeout: limits.timeoutMs,
          }),
      "taking the screenshot",
    );
    const elapsed = Math.round(performance.now() - started);
    if (problems.length > 0)
      return { status: "failed", detail: `${language}: ${problems.join("; ")}` };
    return {
      status: "passed",
      detail: `${language} rendered in Chromium in ${elapsed} ms: ${boxes.length} visible boxes, no console errors, no network`,
      screenshot: new Uint8Array(screenshot),
    };
  }

  async close(): Promise<void> {
    const browser = this.browser;
    this.browser = undefined;
    await (await browser?.catch(() => undefined))?.close().catch(() => {});
  }
}
