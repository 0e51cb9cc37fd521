/**
 * The executability gate for HTML, CSS and SVG in real headless Chromium: what renders passes
 * with a screenshot, what errs, requests the network, lays out nothing or never finishes fails,
 * and without Chromium the gate says so and never passes. The page's network attempts are aimed
 * at a real server on 127.0.0.1, which must see none of them.
 */
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findChromium } from "../src/env/browser.js";
import { ModelClient } from "../src/model/client.js";
import { type ScriptedServer, startScriptedServer } from "../src/model/scripted/server.js";
import { buildWiki, RENDER_FILE } from "../src/wiki/build.js";
import { postProcess } from "../src/wiki/distill.js";
import { executabilityGate, LanguageRunner, UnavailableRunner } from "../src/wiki/gates.js";
import { defaultThresholds } from "../src/wiki/meta.js";
import { BrowserRenderer, metaRefreshTarget } from "../src/wiki/render.js";
import { listEntries } from "../src/wiki/store.js";
import { answer, skill } from "./support/wiki.js";

const hasChromium = findChromium() !== undefined;
const limits = { timeoutMs: 5_000, memoryBytes: 512 * 1024 * 1024 };
let renderer: BrowserRenderer;
let listener: Server;
let port = 0;
/** Every request the pages managed to send to the test's own server (none may arrive). */
const arrived: string[] = [];

/** PNG width and height from the IHDR chunk (bytes 16–23, big-endian). */
function pngSize(png: Uint8Array): { width: number; height: number } {
  const view = Buffer.from(png);
  expect(view.subarray(1, 4).toString("latin1")).toBe("PNG");
  return { width: view.readUInt32BE(16), height: view.readUInt32BE(20) };
}

beforeAll(async () => {
  // A small heap cap (128 MiB) for every page, so the memory test needs no second browser.
  renderer = new BrowserRenderer({ memoryBytes: 128 * 1024 * 1024 });
  listener = createServer((request, response) => {
    arrived.push(`${request.method} ${request.url}`);
    response.end("leaked");
  });
  listener.on("upgrade", (request, socket) => {
    arrived.push(`UPGRADE ${request.url}`);
    socket.destroy();
  });
  await new Promise<void>((done) => listener.listen(0, "127.0.0.1", done));
  port = (listener.address() as AddressInfo).port;
});
afterAll(async () => {
  await renderer?.close();
  await new Promise<void>((done) => listener.close(() => done()));
});

describe.skipIf(!hasChromium)("render gate in Chromium (needs chromium)", () => {
  it("passes a page that renders, with a full-width screenshot", async () => {
    const outcome = await renderer.run(
      `<!doctype html><html><head><style>.card{width:300px;height:120px;background:#135}</style></head>
<body><div class="card">Hello</div><script>document.querySelector(".card").dataset.ready = "1";</script></body></html>`,
      "html",
      "",
      limits,
    );
    expect(outcome.status).toBe("passed");
    expect(outcome.detail).toMatch(/no console errors, no network/);
    const size = pngSize(outcome.screenshot ?? new Uint8Array());
    expect(size).toEqual({ width: 1280, height: 800 });
  });

  it("fails a page whose script throws, and one that lays out nothing", async () => {
    const throwing = await renderer.run(
      "<p>text</p><script>undefinedFunction();</script>",
      "html",
      "",
      limits,
    );
    expect(throwing.status).toBe("failed");
    expect(throwing.detail).toMatch(/1 console error: undefinedFunction is not defined/);
    const logging = await renderer.run(
      "<p>text</p><script>console.error('broken widget')</script>",
      "html",
      "",
      limits,
    );
    expect(logging.detail).toMatch(/console error: broken widget/);
    const empty = await renderer.run("<div></div><span></span>", "html", "", limits);
    expect(empty).toMatchObject({ status: "failed" });
    expect(empty.detail).toMatch(/the layout is empty/);
  });

  it("lets no request out of the page: fetch, image, beacon, WebSocket, refresh and a new window all stay blocked", async () => {
    const target = `127.0.0.1:${port}`;
    const attack = `<!doctype html><html><head>
<meta http-equiv="refresh" content="1;url=http://${target}/refresh">
<link rel="stylesheet" href="http://${target}/style.css">
</head><body><p>visible text</p>
<img src="http://${target}/pixel.png">
<img src="https://tracker.example/pixel.png">
<script>
fetch("http://${target}/fetch").catch(() => {});
navigator.sendBeacon("http://${target}/beacon", "x");
try { new WebSocket("ws://${target}/socket"); } catch {}
window.open("http://${target}/window");
</script></body></html>`;
    const outcome = await renderer.run(attack, "html", "", limits);
    expect(outcome.status).toBe("failed");
    expect(outcome.detail).toMatch(/requested the network \(blocked\): /);
    expect(outcome.detail).toContain(`http://${target}/`);
    // Give anything that escaped time to arrive before checking the server saw nothing.
    await new Promise((done) => setTimeout(done, 500));
    expect(arrived).toEqual([]);
  });

  it("fails a page that never finishes loading, within the time limit", async () => {
    const started = Date.now();
    const outcome = await renderer.run("<p>spinning</p><script>for (;;) {}</script>", "html", "", {
      ...limits,
      timeoutMs: 1_500,
    });
    expect(outcome).toMatchObject({ status: "failed" });
    expect(outcome.detail).toMatch(/did not finish loading within 1500 ms|stopped answering/);
    // The page loops for ever, so any bound tells a stop from a hang; this test took 32 s in
    // all at load 25 (two renders), against a former bound of 12 s for the first; now 120 s.
    expect(Date.now() - started).toBeLessThan(120_000);
    // The renderer still works afterwards.
    expect((await renderer.run("<p>after the loop</p>", "html", "", limits)).status).toBe("passed");
  }, 240_000);

  it("crashes a page that eats memory past the cap instead of the machine, and renders again after", async () => {
    const outcome = await renderer.run(
      "<p>x</p><script>const kept = []; for (;;) kept.push(new Array(1e6).fill(1.5));</script>",
      "html",
      "",
      { ...limits, timeoutMs: 20_000 },
    );
    expect(outcome).toEqual({
      status: "failed",
      detail: "the page did not load: page.goto: Page crashed",
    });
    expect((await renderer.run("<p>after the crash</p>", "html", "", limits)).status).toBe(
      "passed",
    );
  });

  it("passes a stylesheet that styles its sample markup, fails one that parses to nothing or styles nothing", async () => {
    const styled = await renderer.run(
      ".badge { display: inline-block; padding: 4px 8px; background: rebeccapurple; color: white; }",
      "css",
      '<span class="badge">new</span>',
      limits,
    );
    expect(styled.status).toBe("passed");
    expect(styled.screenshot?.length ?? 0).toBeGreaterThan(100);
    // On the built-in sample page when no markup is given.
    expect((await renderer.run("nav a { color: darkred }", "css", "", limits)).status).toBe(
      "passed",
    );
    const garbage = await renderer.run("}}} this is not css {{{", "css", "", limits);
    expect(garbage.detail).toMatch(/parses into no rule/);
    const unused = await renderer.run(
      ".absent-class { color: red }",
      "css",
      "<p>plain</p>",
      limits,
    );
    expect(unused.detail).toMatch(/none of its 1 rules changes the computed style/);
    // Markup given as sample input cannot run scripts (scripts are off for stylesheets).
    const scripted = await renderer.run(
      "p { color: red }",
      "css",
      `<p>text</p><script>fetch("http://127.0.0.1:${port}/from-sample")</script>`,
      limits,
    );
    expect(scripted.status).toBe("passed");
    expect(arrived).toEqual([]);
  });

  it("passes an SVG that draws, fails one that does not parse or is not SVG", async () => {
    const drawn = await renderer.run(
      '<svg xmlns="http://www.w3.org/2000/svg" width="120" height="80"><circle cx="40" cy="40" r="30" fill="teal"/></svg>',
      "svg",
      "",
      limits,
    );
    expect(drawn.status).toBe("passed");
    const broken = await renderer.run(
      '<svg xmlns="http://www.w3.org/2000/svg"><rect width="10" </svg>',
      "svg",
      "",
      limits,
    );
    expect(broken.detail).toMatch(/the SVG does not parse/);
    const html = await renderer.run("<html><body><p>not svg</p></body></html>", "svg", "", limits);
    expect(html.status).toBe("failed");
    const emptySvg = await renderer.run(
      '<svg xmlns="http://www.w3.org/2000/svg" width="100" height="100"></svg>',
      "svg",
      "",
      limits,
    );
    expect(emptySvg.detail).toMatch(/the layout is empty/);
  });
});

describe("render gate without Chromium", () => {
  it('says "unverified: chromium not found" and never passes', async () => {
    const missing = new BrowserRenderer({ env: { SKILLSMITH_CHROMIUM: "/nonexistent/chromium" } });
    expect(missing.available).toBe(false);
    const candidate = postProcess(
      "web-frontend",
      skill({
        skill_name: "Card",
        provenance: { source_path: "a.html", node_index: 0 },
        code_body: "<p>hello</p>",
        code_language: "HTML",
      }),
      0,
      defaultThresholds,
    );
    const gate = await executabilityGate(
      candidate,
      new LanguageRunner(new UnavailableRunner("not used"), missing),
      defaultThresholds,
    );
    expect(gate).toMatchObject({
      status: "unknown",
      execOk: "unknown",
      detail: "unverified: chromium not found",
    });
    expect(gate.screenshot).toBeUndefined();
  });
});

describe.skipIf(!hasChromium)("wiki build with rendered code (needs chromium)", () => {
  let root: string;
  let server: ScriptedServer;
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), "skillsmith-wiki-render-"));
    await mkdir(join(root, "resources"));
    const { writeFile } = await import("node:fs/promises");
    await writeFile(
      join(root, "resources", "cards.html"),
      "<html><head><title>Cards</title></head><body><article><p>A card groups a title and a short text inside a bordered box with some padding.</p><p>Give the card a fixed width and let the grid place several of them in a row.</p></article></body></html>",
    );
    server = await startScriptedServer({
      script: {
        rules: [
          {
            match: { lastUserMessage: "Resource path: cards.html" },
            reply: answer([
              skill({
                skill_name: "Bordered card",
                category_path: ["components"],
                provenance: { source_path: "cards.html", node_index: 0 },
                code_body:
                  "<!doctype html><html><body><div style='border:1px solid #333;padding:8px;width:200px'>Title</div></body></html>",
                code_language: "html",
              }),
              skill({
                skill_name: "Card with a remote font",
                category_path: ["components"],
                provenance: { source_path: "cards.html", node_index: 1 },
                code_body:
                  "<link rel='stylesheet' href='https://fonts.example.com/css?family=X'><div>Title</div>",
                code_language: "html",
              }),
            ]),
          },
        ],
        fallback: answer([]),
      },
    });
  });
  afterAll(async () => {
    await server?.close();
    await rm(root, { recursive: true, force: true });
  });

  it("keeps the render as the visual modality of a verified entry, and a page that needs the network as reference-only", async () => {
    const model = new ModelClient({
      spec: "anthropic:claude-haiku-4-5",
      env: { ANTHROPIC_API_KEY: "t", ANTHROPIC_BASE_URL: server.url },
      cwd: root,
    });
    const wiki = join(root, "wiki");
    const summary = await buildWiki({
      wiki,
      domain: "web-frontend",
      resources: join(root, "resources"),
      model,
      runner: new LanguageRunner(new UnavailableRunner("not used"), renderer),
    });
    expect(summary.reports.map((report) => [report.skill_name, report.outcome])).toEqual([
      ["Bordered card", "accepted"],
      ["Card with a remote font", "reference-only"],
    ]);
    const entries = await listEntries(wiki, "web-frontend");
    const card = entries.find((entry) => entry.meta.skill_name === "Bordered card");
    expect(card?.meta).toMatchObject({
      exec_ok: true,
      validation_status: "verified",
      modalities_present: ["text", "visual", "code"],
      files: { visual: [RENDER_FILE], code: ["code/main.html"] },
    });
    const { readFile } = await import("node:fs/promises");
    expect(pngSize(await readFile(join(card?.dir ?? "", RENDER_FILE))).width).toBe(1280);
    const remote = entries.find((entry) => entry.meta.skill_name === "Card with a remote font");
    expect(remote?.meta.validation_note).toMatch(
      /requested the network \(blocked\): https:\/\/fonts\.example\.com/,
    );
    expect(remote?.meta.files.visual).toEqual([]);
  });

  it("with SKILLSMITH_CHROMIUM naming no browser, the default runner leaves the page unverified", async () => {
    const model = new ModelClient({
      spec: "anthropic:claude-haiku-4-5",
      env: { ANTHROPIC_API_KEY: "t", ANTHROPIC_BASE_URL: server.url },
      cwd: root,
    });
    const summary = await buildWiki({
      wiki: join(root, "wiki-without-browser"),
      domain: "web-frontend",
      resources: join(root, "resources"),
      model,
      fetch: { env: { SKILLSMITH_CHROMIUM: "/nonexistent/chromium" } },
    });
    expect(summary.reports.map((report) => [report.outcome, report.gates.at(-1)?.detail])).toEqual([
      ["unverified", "unverified: chromium not found"],
      ["unverified", "unverified: chromium not found"],
    ]);
  });
});

describe("metaRefreshTarget", () => {
  it("finds a refresh target in either attribute order, and nothing in a page without one", () => {
    expect(
      metaRefreshTarget('<meta http-equiv="refresh" content="5; url=https://a.example/x">'),
    ).toBe("https://a.example/x");
    expect(metaRefreshTarget("<META CONTENT='0;URL=http://b.example' HTTP-EQUIV='Refresh'>")).toBe(
      "http://b.example",
    );
    expect(metaRefreshTarget('<meta http-equiv="refresh" content="30">')).toBeUndefined();
    expect(metaRefreshTarget('<meta name="viewport" content="url=x">')).toBeUndefined();
  });
});
