/**
 * URL resources end to end: a real HTTP server on 127.0.0.1 serves an HTML article, an image and
 * a git repository (smart HTTP through `git http-backend`, and dumb HTTP as static files); the
 * wiki is built from the URLs with the scripted model server as distiller. The manifest must
 * record each URL, its fetch time and a content hash computed here independently; a 404, a
 * timeout and a missing repository must fail with messages naming the URL, leaving no wiki.
 */
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InfrastructureError, InputError } from "../src/core/errors.js";
import { ModelClient } from "../src/model/client.js";
import { type ScriptedServer, startScriptedServer } from "../src/model/scripted/server.js";
import { buildWiki } from "../src/wiki/build.js";
import { UnavailableRunner } from "../src/wiki/gates.js";
import { skillId } from "../src/wiki/meta.js";
import { poolRecordSchema } from "../src/wiki/online.js";
import { parseResourceUrl } from "../src/wiki/resources/url.js";
import { listEntries, readResourceManifest } from "../src/wiki/store.js";
import { runInProcess } from "./support/cli.js";
import {
  ARTICLE_HTML,
  answer,
  hasGit,
  makeServedRepository,
  type ResourceServer,
  SLUGIFY_PY,
  skill,
  startResourceServer,
  TINY_PNG,
  writeHandWiki,
} from "./support/wiki.js";

const README = "# textkit\n\nSmall text helpers: slugify titles for URLs.\n";
const REPO_FILES = {
  "README.md": README,
  LICENSE: "MIT License\n\nPermission is hereby granted, free of charge, to any person\n",
  "textkit/slug.py": SLUGIFY_PY,
};
const FETCHED_AT = "2026-11-29T12:00:00.000Z";
const QR_HTML = `<html><head><title>QR codes</title></head><body><article>
<p>A QR code stores a short text, such as a URL, as a square grid of dark and light modules.</p>
<p>Generate one from the command line with a QR encoder and embed the PNG in the page with alt text.</p>
</article></body></html>`;

let root: string;
let web: ResourceServer;
let model: ScriptedServer;
let commit: string;
let distiller: ModelClient;
let urls: { article: string; image: string; repo: string; dumbRepo: string };
/** A script rule's regex matching exactly one resource path line of the distiller prompt. */
const resourcePath = (path: string) =>
  `Resource path: ${path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\n`;
const sha256 = (data: string | Uint8Array) => createHash("sha256").update(data).digest("hex");

/** The repository's content hash by its documented definition, computed here by hand. */
function expectedRepositoryHash(files: Record<string, string>): string {
  const hash = createHash("sha256");
  for (const path of Object.keys(files).sort())
    hash.update(`${path}\0${sha256(files[path] ?? "")}\n`);
  return hash.digest("hex");
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "skillsmith-wiki-url-"));
  const gitRoot = join(root, "served");
  await mkdir(gitRoot, { recursive: true });
  if (hasGit)
    commit = await makeServedRepository(
      join(root, "work", "textkit"),
      join(gitRoot, "textkit.git"),
      REPO_FILES,
    );
  web = await startResourceServer({
    gitRoot,
    staticRoot: gitRoot,
    routes: {
      "/articles/grid.html": { body: ARTICLE_HTML, contentType: "text/html; charset=utf-8" },
      "/images/palette.png": { body: TINY_PNG, contentType: "image/png" },
      "/articles/qr-codes.html": { body: QR_HTML, contentType: "text/html" },
      // Headers, then nothing: the download must give up at its timeout.
      "/stalled.html": {
        handler: (_request, response) => {
          response.writeHead(200, { "content-type": "text/html" });
          response.write("<html><body><p>");
        },
      },
      // No answer at all.
      "/silent.html": { handler: () => {} },
      // An error page sent with 200 where an image was expected.
      "/images/fake.png": { body: "<html>oops</html>", contentType: "text/html" },
    },
  });
  urls = {
    article: `${web.url}/articles/grid.html`,
    image: `${web.url}/images/palette.png`,
    repo: `${web.url}/git/textkit.git`,
    dumbRepo: `${web.url}/static/textkit.git`,
  };
  const repoAnswer = (path: string) =>
    answer([
      skill({
        skill_name: "Slugify titles",
        provenance: { source_path: path, node_index: 0 },
      }),
    ]);
  model = await startScriptedServer({
    script: {
      rules: [
        {
          match: { lastUserMessage: resourcePath(urls.article) },
          reply: answer([
            skill({
              skill_name: "Center with CSS grid",
              category_path: ["layout", "grid"],
              applicability: "When a single child must be centered in both axes.",
              tags: ["css", "grid", "center"],
              provenance: { source_path: urls.article, node_index: 1 },
            }),
          ]),
        },
        {
          match: { lastUserMessage: resourcePath(urls.image) },
          reply: answer([
            skill({
              skill_name: "Dark header palette",
              category_path: ["styling", "color"],
              applicability: "When a page header needs a dark, calm background.",
              tags: ["palette", "navy", "header"],
              provenance: { source_path: urls.image, node_index: 0 },
              visual_caption: "The swatch.",
              visual_refs: [0],
            }),
          ]),
        },
        {
          match: { lastUserMessage: resourcePath(`${web.url}/articles/qr-codes.html`) },
          reply: answer([
            skill({
              skill_name: "Embed a QR code",
              category_path: ["components", "media"],
              tags: ["qr", "code", "png"],
              applicability: "When a page must offer a scannable link as a QR code.",
              provenance: { source_path: `${web.url}/articles/qr-codes.html`, node_index: 1 },
            }),
          ]),
        },
        ...[urls.repo, `${urls.repo}#main`, urls.dumbRepo].map((path) => ({
          match: { lastUserMessage: resourcePath(path) },
          reply: repoAnswer(path),
        })),
      ],
      fallback: answer([]),
    },
  });
  distiller = new ModelClient({
    spec: "anthropic:claude-haiku-4-5",
    env: { ANTHROPIC_API_KEY: "test", ANTHROPIC_BASE_URL: model.url },
    cwd: root,
  });
});

afterAll(async () => {
  await web?.close();
  await model?.close();
  await rm(root, { recursive: true, force: true });
});

describe("URL parsing", () => {
  it("tells repositories, documents and refs from the URL, and refuses what it cannot fetch", () => {
    const where = { field: "--resources" };
    expect(parseResourceUrl("https://example.org/a/b.git#v1.2", where)).toMatchObject({
      href: "https://example.org/a/b.git",
      ref: "v1.2",
      impliedType: "repository",
    });
    expect(parseResourceUrl("https://github.com/owner/repo", where).impliedType).toBe("repository");
    expect(parseResourceUrl("git@example.org:team/repo.git", where)).toMatchObject({
      scheme: "scp",
      impliedType: "repository",
    });
    expect(parseResourceUrl("git+https://example.org/code#main", where)).toMatchObject({
      href: "https://example.org/code",
      ref: "main",
      impliedType: "repository",
    });
    // A fragment on a page is a place in the page, not a ref: it is dropped.
    const page = parseResourceUrl("https://example.org/guide.html#intro", where);
    expect(page).toMatchObject({ href: "https://example.org/guide.html", impliedType: "article" });
    expect(page.ref).toBeUndefined();
    expect(parseResourceUrl("https://example.org/docs", where).impliedType).toBeUndefined();
    expect(() => parseResourceUrl("ftp://example.org/x.html", where)).toThrow(
      'unsupported URL scheme "ftp:"',
    );
    expect(() => parseResourceUrl("https://user:secret@example.org/r.git", where)).toThrow(
      "carries a password",
    );
    expect(() => parseResourceUrl("http://", where)).toThrow(InputError);
  });
});

describe.skipIf(!hasGit)("wiki build from URLs (needs git)", () => {
  it("fetches an article, an image and a git repository, distils them and records each URL, fetch time and hash", async () => {
    const wiki = join(root, "wiki-direct");
    const progress: string[] = [];
    const summary = await buildWiki({
      wiki,
      domain: "web-frontend",
      resources: [urls.article, urls.image, urls.repo],
      model: distiller,
      runner: new UnavailableRunner("not needed"),
      now: () => new Date(FETCHED_AT),
      onProgress: (line) => progress.push(line),
    });
    expect(summary.resources).toBe(3);
    expect(summary.rejected).toEqual({ completeness: 0, provenance: 0, modality: 0 });
    expect(progress).toContain(`  fetching ${urls.repo}`);

    const entries = await listEntries(wiki, "web-frontend");
    expect(entries.map((entry) => entry.meta.skill_id).sort()).toEqual(
      [
        skillId("web-frontend", urls.article, 1),
        skillId("web-frontend", urls.image, 0),
        skillId("web-frontend", urls.repo, 0),
      ].sort(),
    );
    const palette = entries.find((entry) => entry.meta.skill_name === "Dark header palette");
    expect(palette?.meta.files.visual).toHaveLength(1);
    expect(palette?.meta.provenance[0]?.source_path).toBe(urls.image);

    const manifest = await readResourceManifest(wiki, "web-frontend");
    const byPath = new Map(manifest?.resources.map((record) => [record.path, record]));
    expect(byPath.get(urls.article)).toMatchObject({
      type: "article",
      url: urls.article,
      fetched_at: FETCHED_AT,
      sha256: sha256(ARTICLE_HTML),
      bytes: Buffer.byteLength(ARTICLE_HTML),
      licence: "CC-BY-4.0",
      content_type: "text/html; charset=utf-8",
    });
    expect(byPath.get(urls.image)).toMatchObject({
      type: "image",
      url: urls.image,
      fetched_at: FETCHED_AT,
      sha256: sha256(TINY_PNG),
      licence_flag: "unknown",
    });
    expect(byPath.get(urls.repo)).toMatchObject({
      type: "repository",
      url: urls.repo,
      fetched_at: FETCHED_AT,
      commit,
      sha256: expectedRepositoryHash(REPO_FILES),
      licence: "MIT",
    });
    expect(byPath.get(urls.repo)?.ref).toBeUndefined();

    // The downloads stay in the wiki by content hash; readers skip the dot folder.
    const cached = join(wiki, ".cache", "downloads", sha256(TINY_PNG), "palette.png");
    expect(await readFile(cached)).toEqual(TINY_PNG);
    expect(await readdir(join(wiki, ".cache", "downloads"))).toHaveLength(2);
    // The repository's code regions reached the distiller: the clone was read by tree-sitter.
    const repoCall = model.requests.find((request) =>
      request.lastUserMessage.includes(`Resource path: ${urls.repo}\n`),
    );
    expect(repoCall?.lastUserMessage).toContain("textkit/slug.py:5-8 function_definition slugify");
  });

  it("reads URLs from a resource list and the command line, with a ref, and clones over dumb HTTP too", async () => {
    const list = join(root, "list.json");
    await writeFile(
      list,
      JSON.stringify({
        resources: [
          { url: urls.repo, ref: "main" },
          { url: urls.article, licence: "CC0-1.0" },
          { url: `file://${join(root, "served", "textkit.git")}` },
        ],
      }),
    );
    const result = await runInProcess(
      [
        "wiki",
        "build",
        "--domain",
        "demo",
        "--resources",
        list,
        urls.dumbRepo,
        "--wiki",
        "wiki-list",
        "--model",
        "anthropic:claude-haiku-4-5",
        "--json",
      ],
      {
        cwd: root,
        env: { PATH: process.env.PATH, ANTHROPIC_API_KEY: "t", ANTHROPIC_BASE_URL: model.url },
      },
    );
    expect(result.stderr).not.toContain("error");
    expect(result.code).toBe(0);
    const manifest = await readResourceManifest(join(root, "wiki-list"), "demo");
    const byPath = new Map(manifest?.resources.map((record) => [record.path, record]));
    const fileUrl = `file://${join(root, "served", "textkit.git")}`;
    expect([...byPath.keys()].sort()).toEqual(
      [`${urls.repo}#main`, urls.article, urls.dumbRepo, fileUrl].sort(),
    );
    expect(byPath.get(fileUrl)).toMatchObject({ type: "repository", commit, url: fileUrl });
    expect(byPath.get(`${urls.repo}#main`)).toMatchObject({ ref: "main", commit, url: urls.repo });
    expect(byPath.get(urls.dumbRepo)).toMatchObject({
      commit,
      sha256: expectedRepositoryHash(REPO_FILES),
    });
    // A licence declared in the list wins over the page's own.
    expect(byPath.get(urls.article)?.licence).toBe("CC0-1.0");
    const ids = (await listEntries(join(root, "wiki-list"), "demo")).map(
      (entry) => entry.meta.skill_id,
    );
    expect(ids).toContain(skillId("demo", `${urls.repo}#main`, 0));
    expect(ids).toContain(skillId("demo", urls.dumbRepo, 0));
    // Smart HTTP was really used for the first repository, static files for the second.
    expect(web.requests).toContain("/git/textkit.git/info/refs");
    expect(web.requests).toContain("/static/textkit.git/info/refs");
  });

  it("names the URL and the failure: 404 and a missing repository exit 2, a timeout exits 3, and no wiki is left", async () => {
    const env = { PATH: process.env.PATH, ANTHROPIC_API_KEY: "t", ANTHROPIC_BASE_URL: model.url };
    const build = (resources: string[], wiki: string, extra: string[] = []) =>
      runInProcess(
        [
          "wiki",
          "build",
          "--domain",
          "demo",
          "--resources",
          ...resources,
          "--wiki",
          wiki,
          "--model",
          "anthropic:claude-haiku-4-5",
          ...extra,
        ],
        { cwd: root, env },
      );
    const missing = await build([urls.article, `${web.url}/articles/missing.html`], "wiki-404");
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`GET ${web.url}/articles/missing.html answered HTTP 404`);
    expect(existsSync(join(root, "wiki-404"))).toBe(false);

    const silent = await build([`${web.url}/silent.html`], "wiki-timeout", [
      "--fetch-timeout",
      "0.3",
    ]);
    expect(silent.code).toBe(3);
    expect(silent.stderr).toContain(`GET ${web.url}/silent.html: timed out after 0.3 s`);
    expect(existsSync(join(root, "wiki-timeout"))).toBe(false);

    const noRepo = await build([`${web.url}/git/nothing.git`], "wiki-norepo");
    expect(noRepo.code).toBe(2);
    expect(noRepo.stderr).toContain(`git clone ${web.url}/git/nothing.git failed`);
    expect(existsSync(join(root, "wiki-norepo"))).toBe(false);

    const badScheme = await build(["ftp://example.org/a.html"], "wiki-scheme");
    expect(badScheme.code).toBe(2);
    expect(badScheme.stderr).toContain(
      '--resources": "ftp://example.org/a.html": unsupported URL scheme',
    );
  });

  it("gives up on a download that stalls mid-body, and refuses an HTML page served for an image", async () => {
    const stalled = await buildWiki({
      wiki: join(root, "wiki-stalled"),
      domain: "demo",
      resources: [`${web.url}/stalled.html`],
      model: distiller,
      fetch: { timeoutMs: 300 },
    }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(stalled).toBeInstanceOf(InfrastructureError);
    expect((stalled as InfrastructureError).code).toBe("wiki.url-timeout");
    expect((stalled as InfrastructureError).retryable).toBe(true);
    expect((stalled as Error).message).toContain(`${web.url}/stalled.html`);

    const fake = await buildWiki({
      wiki: join(root, "wiki-fake"),
      domain: "demo",
      resources: [`${web.url}/images/fake.png`],
      model: distiller,
    }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(fake).toBeInstanceOf(InputError);
    expect((fake as Error).message).toContain(
      'expected an image, the server sent Content-Type "text/html"',
    );

    const capped = await buildWiki({
      wiki: join(root, "wiki-capped"),
      domain: "demo",
      resources: [urls.article],
      model: distiller,
      fetch: { maxBytes: { article: 100 } },
    }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect((capped as InputError).code).toBe("wiki.url-too-large");
    for (const name of ["wiki-stalled", "wiki-fake", "wiki-capped"])
      expect(existsSync(join(root, name))).toBe(false);
  });
});

describe("wiki search --online (URL and folder connectors)", () => {
  const env = () => ({
    PATH: process.env.PATH,
    ANTHROPIC_API_KEY: "t",
    ANTHROPIC_BASE_URL: model.url,
  });
  /** `wiki search <query> --online` over the hand-written wiki `offline`, then `flags`. */
  const searchOnline = (query: string, flags: string[]) =>
    runInProcess(
      [
        "wiki",
        "search",
        query,
        "--wiki",
        "offline",
        "--online",
        "--domain",
        "web-frontend",
        "--model",
        "anthropic:claude-haiku-4-5",
        ...flags,
      ],
      { cwd: root, env: env() },
    );

  it("acquires from the configured connectors into a recorded pool when the wiki has no adequate skill", async () => {
    const offline = join(root, "offline");
    await writeHandWiki(offline);
    const before = (await listEntries(offline)).map((entry) => entry.meta.skill_id);
    const local = join(root, "online-local");
    await mkdir(local, { recursive: true });
    await writeFile(
      join(local, "gardening.html"),
      "<html><body><p>Gardening tips for tomatoes on a small balcony, watered daily.</p></body></html>",
    );
    const qr = `${web.url}/articles/qr-codes.html`;
    const dead = `${web.url}/articles/gone.html`;
    const result = await searchOnline("embed qr code", [
      "--resources",
      "online-local",
      qr,
      dead,
      "--pool",
      "run-1/pool",
      "--budget",
      "5",
      "--json",
    ]);
    expect(result.code).toBe(0);
    const output = JSON.parse(result.stdout) as {
      shortlist: unknown[];
      online: {
        triggered: boolean;
        reason: string;
        resources: number;
        failed: { connector: string; path: string; error: string }[];
        pool_size: number;
        result: { selected: { card: { skill_id: string } }[] };
      };
    };
    // Nothing in the hand-written wiki shares a word with the query.
    expect(output.shortlist).toEqual([]);
    expect(output.online.triggered).toBe(true);
    expect(output.online.reason).toBe("best score 0.000 < 2");
    // The gardening page shares no query word; the dead link is skipped and recorded.
    expect(output.online.resources).toBe(1);
    expect(output.online.failed).toEqual([
      {
        connector: "urls",
        stage: "fetch",
        path: dead,
        code: "wiki.url-status",
        error: `field "--resources": GET ${dead} answered HTTP 404 Not Found`,
      },
    ]);
    const qrId = skillId("web-frontend", qr, 1);
    expect(output.online.pool_size).toBe(1);
    expect(output.online.result.selected.map((pick) => pick.card.skill_id)).toEqual([qrId]);

    const pool = join(root, "run-1", "pool");
    expect((await listEntries(pool, "web-frontend")).map((entry) => entry.meta.skill_id)).toEqual([
      qrId,
    ]);
    const record = poolRecordSchema.parse(
      JSON.parse(await readFile(join(pool, "pool.json"), "utf8")),
    );
    expect(record.budget).toBe(5);
    expect(record.acquisitions[0]?.query).toBe("embed qr code");
    expect(record.acquisitions[0]?.resources).toEqual([
      {
        connector: "urls",
        path: qr,
        source: qr,
        type: "article",
        fetched_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      },
    ]);
    expect(record.acquisitions[0]?.failed?.map((failure) => failure.path)).toEqual([dead]);
    expect((await readResourceManifest(pool, "web-frontend"))?.resources[0]).toMatchObject({
      path: qr,
      url: qr,
      sha256: sha256(QR_HTML),
    });
    // The offline wiki is unchanged.
    expect((await listEntries(offline)).map((entry) => entry.meta.skill_id)).toEqual(before);
  });

  it("does not acquire when the wiki has an adequate skill, and checks its flags first", async () => {
    const offline = join(root, "offline");
    const adequate = await searchOnline("center a div with css grid", [
      "--resources",
      `${web.url}/articles/qr-codes.html`,
      "--pool",
      "run-2/pool",
    ]);
    expect(adequate.code).toBe(0);
    expect(adequate.stdout).toMatch(/online acquisition not needed \(best score \d+\.\d{3} ≥ 2\)/);
    expect(existsSync(join(root, "run-2"))).toBe(false);
    expect(existsSync(offline)).toBe(true);

    const overBudget = await searchOnline("x", ["--resources", "online-local", "--budget", "101"]);
    expect(overBudget.code).toBe(2);
    expect(overBudget.stderr).toContain("--budget: expected 1 to 100, got 101");
    const noResources = await searchOnline("x", []);
    expect(noResources.code).toBe(2);
    expect(noResources.stderr).toContain(
      "--online needs something to acquire from: --search <backend...>, --search-config <file> or --resources",
    );
    const badUrl = await searchOnline("x", ["--resources", "gopher://example.org/x"]);
    expect(badUrl.code).toBe(2);
    expect(badUrl.stderr).toContain('unsupported URL scheme "gopher:"');
  });
});
