/**
 * Online acquisition that searches: a real HTTP server on 127.0.0.1 plays a GitHub-shaped REST
 * API (repository and code search, reached through a configurable API base URL) and a JSON
 * search endpoint, and serves the results (pages, and git repositories through git
 * http-backend); the scripted model server plays the distiller. What the backends asked, what
 * was fetched, distilled and gated, and what failed, are checked against what the test served.
 */
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ModelClient } from "../src/model/client.js";
import { type ScriptedServer, startScriptedServer } from "../src/model/scripted/server.js";
import { UnavailableRunner } from "../src/wiki/gates.js";
import { skillId } from "../src/wiki/meta.js";
import { acquireOnline, poolRecordSchema } from "../src/wiki/online.js";
import { createSearchBackend } from "../src/wiki/resources/search.js";
import { listEntries, readResourceManifest } from "../src/wiki/store.js";
import { runInProcess } from "./support/cli.js";
import {
  answer,
  hasGit,
  makeServedRepository,
  type ResourceServer,
  skill,
  startResourceServer,
  writeHandWiki,
} from "./support/wiki.js";

const TOKEN = "ghp_test_token_never_recorded";
const TASK = "Please make a sticky table header that stays visible while the rows scroll";
const STICKY_CSS = `thead th {
  position: sticky;
  top: 0;
  background: white;
}
`;
const ARTICLE = `<!doctype html><html><head><title>Sticky headers</title>
<meta name="license" content="CC-BY-4.0"></head><body><article>
<h1>Sticky table headers</h1>
<p>Give each header cell position sticky and top zero, and the header row stays at the top of the scrolling table.</p>
<p>Set a background on the header cells, or the rows scrolling underneath show through them.</p>
</article></body></html>`;

let root: string;
let web: ResourceServer;
let model: ScriptedServer;
let commit: string;
/** Requests the GitHub-shaped API received: path, query and the headers that matter. */
const apiRequests: {
  path: string;
  q: string | null;
  perPage: string | null;
  auth?: string;
  version?: string;
}[] = [];
const endpointRequests: string[] = [];
/** The Authorization header of each request for a search result (the token must not go there). */
const resultAuthorisations: string[] = [];

/** A port on 127.0.0.1 that nothing listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((done) => server.close(() => done()));
  return port;
}

function recordApi(request: IncomingMessage): URL {
  const url = new URL(request.url ?? "/", "http://127.0.0.1");
  apiRequests.push({
    path: url.pathname,
    q: url.searchParams.get("q"),
    perPage: url.searchParams.get("per_page"),
    ...(request.headers.authorization === undefined ? {} : { auth: request.headers.authorization }),
    ...(request.headers["x-github-api-version"] === undefined
      ? {}
      : { version: String(request.headers["x-github-api-version"]) }),
  });
  return url;
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "skillsmith-wiki-search-"));
  await writeHandWiki(join(root, "offline"));
  const gitRoot = join(root, "git");
  await mkdir(join(gitRoot, "widgets"), { recursive: true });
  if (hasGit)
    commit = await makeServedRepository(
      join(root, "work", "sticky-table"),
      join(gitRoot, "widgets", "sticky-table.git"),
      {
        "README.md": "# sticky-table\n\nSticky headers for long tables.\n",
        LICENSE:
          "MIT License\n\nPermission is hereby granted, free of charge, to any person obtaining a copy\n",
        "css/sticky.css": STICKY_CSS,
        "js/table.js": "export function rowCount(table) {\n  return table.rows.length;\n}\n",
      },
    );
  let base = "";
  web = await startResourceServer({
    gitRoot,
    routes: {
      "/api/v3/search/repositories": {
        handler: (request, response) => {
          recordApi(request);
          response.writeHead(200, { "content-type": "application/json" });
          response.end(
            JSON.stringify({
              total_count: 1,
              incomplete_results: false,
              items: [
                {
                  full_name: "widgets/sticky-table",
                  html_url: `${base}/git/widgets/sticky-table`,
                  clone_url: `${base}/git/widgets/sticky-table.git`,
                  default_branch: "main",
                  description: "Sticky headers for long tables",
                  license: { spdx_id: "MIT" },
                },
              ],
            }),
          );
        },
      },
      "/api/v3/search/code": {
        handler: (request, response) => {
          recordApi(request);
          response.writeHead(200, { "content-type": "application/json" });
          response.end(
            JSON.stringify({
              total_count: 1,
              incomplete_results: false,
              items: [
                {
                  name: "sticky.css",
                  path: "css/sticky.css",
                  sha: "0".repeat(40),
                  html_url: `${base}/git/widgets/sticky-table/blob/${commit}/css/sticky.css`,
                  repository: {
                    full_name: "widgets/sticky-table",
                    html_url: `${base}/git/widgets/sticky-table`,
                  },
                },
              ],
            }),
          );
        },
      },
      "/opensearch": {
        handler: (request, response) => {
          endpointRequests.push(request.url ?? "");
          response.writeHead(200, { "content-type": "application/json" });
          response.end(
            JSON.stringify({
              results: [
                { url: `${base}/docs/sticky-header.html` },
                { url: "file:///etc/passwd" },
                { url: `${base}/docs/gone.html` },
              ],
            }),
          );
        },
      },
      "/docs/sticky-header.html": {
        handler: (request, response) => {
          resultAuthorisations.push(request.headers.authorization ?? "(none)");
          response.writeHead(200, { "content-type": "text/html" });
          response.end(ARTICLE);
        },
      },
      "/api/evil/search/code": {
        handler: (_request, response) => {
          const hit = (path: string) => ({
            name: "x",
            path,
            sha: "0".repeat(40),
            html_url: `${base}/git/widgets/sticky-table/blob/${commit}/${path}`,
            repository: {
              full_name: "widgets/sticky-table",
              html_url: `${base}/git/widgets/sticky-table`,
            },
          });
          response.writeHead(200, { "content-type": "application/json" });
          response.end(
            JSON.stringify({
              total_count: 2,
              items: [hit("../../../../etc/passwd"), hit("css/missing.css")],
            }),
          );
        },
      },
      "/api/spoof/search/repositories": {
        handler: (_request, response) => {
          response.writeHead(429, { "content-type": "application/json" });
          response.end(
            JSON.stringify({ message: "slow down\u001b[2J\u001b[31mFAKE PROMPT$ \r\nmore" }),
          );
        },
      },
      "/garbage": {
        body: "<html><body>Service temporarily unavailable</body></html>",
        contentType: "text/html",
      },
      "/api/limited/search/repositories": {
        handler: (_request, response) => {
          response.writeHead(403, {
            "content-type": "application/json",
            "x-ratelimit-remaining": "0",
            "x-ratelimit-reset": "1893456000",
          });
          response.end(JSON.stringify({ message: "API rate limit exceeded for 127.0.0.1." }));
        },
      },
      "/busy": {
        handler: (_request, response) => {
          response.writeHead(429, { "content-type": "application/json", "retry-after": "30" });
          response.end(JSON.stringify({ message: "Too many requests" }));
        },
      },
      // Answers nothing, ever: a search endpoint that hangs.
      "/stall": { handler: () => {} },
    },
  });
  base = web.url;
  const repoPath = `${base}/git/widgets/sticky-table.git#main`;
  const codePath = `${base}/git/widgets/sticky-table/blob/${commit}/css/sticky.css`;
  const articlePath = `${base}/docs/sticky-header.html`;
  model = await startScriptedServer({
    script: {
      rules: [
        {
          match: {
            lastUserMessage: `Resource path: ${repoPath.replace(/[.?*+^$()[\]{}|\\]/g, "\\$&")}\n`,
          },
          reply: answer([
            skill({
              skill_name: "Count table rows",
              category_path: ["components", "tables"],
              tags: ["table", "rows"],
              applicability: "When a script needs the number of rows of a table.",
              provenance: { source_path: repoPath, node_index: 0 },
            }),
          ]),
        },
        {
          match: {
            lastUserMessage: `Resource path: ${codePath.replace(/[.?*+^$()[\]{}|\\]/g, "\\$&")}`,
          },
          reply: answer([
            skill({
              skill_name: "Sticky table header",
              category_path: ["components", "tables"],
              tags: ["sticky", "table", "header"],
              applicability: "When a long table's header must stay visible while its rows scroll.",
              provenance: { source_path: codePath, node_index: 0 },
            }),
          ]),
        },
        {
          match: {
            lastUserMessage: `Resource path: ${articlePath.replace(/[.?*+^$()[\]{}|\\]/g, "\\$&")}`,
          },
          reply: answer([
            skill({
              skill_name: "Opaque sticky header cells",
              category_path: ["styling"],
              tags: ["sticky", "background"],
              applicability: "When rows show through a sticky header.",
              provenance: { source_path: articlePath, node_index: 2 },
            }),
          ]),
        },
      ],
      fallback: answer([]),
    },
  });
});
afterAll(async () => {
  await model?.close();
  await web?.close();
  await rm(root, { recursive: true, force: true });
});

function distiller(): ModelClient {
  return new ModelClient({
    spec: "anthropic:claude-haiku-4-5",
    env: { ANTHROPIC_API_KEY: "t", ANTHROPIC_BASE_URL: model.url },
    cwd: root,
  });
}

describe.skipIf(!hasGit)("online acquisition through search backends (needs git)", () => {
  it("queries GitHub repository and code search and a JSON endpoint, fetches, distils and gates what they found into the pool", async () => {
    const environment = {
      env: { GITHUB_TOKEN: TOKEN },
      cwd: root,
      where: { field: "--search" },
    };
    const apiUrl = `${web.url}/api/v3`;
    const backends = [
      createSearchBackend({ kind: "github", search: "repositories", apiUrl }, environment),
      createSearchBackend(
        { kind: "github", search: "code", apiUrl, qualifiers: "language:css" },
        environment,
      ),
      createSearchBackend(
        {
          kind: "json-endpoint",
          name: "docs",
          template: `${web.url}/opensearch?q={searchTerms}&n={count}&d={domain}`,
          results: "$.results[*].url",
        },
        environment,
      ),
    ];
    const offline = join(root, "offline");
    const before = (await listEntries(offline)).map((entry) => entry.meta.skill_id);
    const pool = join(root, "pool-1");
    const result = await acquireOnline({
      query: TASK,
      pool,
      offlineWiki: offline,
      domain: "web-frontend",
      backends,
      model: distiller(),
      budget: 10,
      runner: new UnavailableRunner("no code in these skills"),
    });

    // The targeted query: the task's content words, in order, at most 6 (worked out by hand).
    const terms = ["sticky", "table", "header", "stays", "visible", "rows"];
    expect(result.query.terms).toEqual(terms);
    expect(apiRequests).toEqual([
      {
        path: "/api/v3/search/repositories",
        q: terms.join(" "),
        perPage: "3",
        auth: `Bearer ${TOKEN}`,
        version: "2022-11-28",
      },
      {
        path: "/api/v3/search/code",
        q: `${terms.join(" ")} language:css`,
        perPage: "3",
        auth: `Bearer ${TOKEN}`,
        version: "2022-11-28",
      },
    ]);
    expect(endpointRequests).toEqual([`/opensearch?q=${terms.join("%20")}&n=3&d=web-frontend`]);

    const repoPath = `${web.url}/git/widgets/sticky-table.git#main`;
    const codePath = `${web.url}/git/widgets/sticky-table/blob/${commit}/css/sticky.css`;
    const articlePath = `${web.url}/docs/sticky-header.html`;
    expect(result.resources).toBe(3);
    expect(result.summary?.accepted).toBe(3);
    expect(result.allFailed).toBe(false);
    expect(
      (await listEntries(pool, "web-frontend")).map((entry) => entry.meta.skill_id).sort(),
    ).toEqual(
      [
        skillId("web-frontend", repoPath, 0),
        skillId("web-frontend", codePath, 0),
        skillId("web-frontend", articlePath, 2),
      ].sort(),
    );

    // The code hit was read as the one file GitHub found, at the commit it named: one
    // whole-file unit (CSS has no grammar), the licence still read from the checkout.
    const manifest = await readResourceManifest(pool, "web-frontend");
    const code = manifest?.resources.find((record) => record.path === codePath);
    expect(code).toMatchObject({
      type: "repository",
      focus: ["css/sticky.css"],
      commit,
      ref: commit,
      licence: "MIT",
    });
    const entry = (await listEntries(pool, "web-frontend")).find(
      (each) => each.meta.skill_name === "Sticky table header",
    );
    expect(entry?.meta.provenance[0]?.locator).toBe("css/sticky.css:1-6 whole file");
    expect(await readFile(join(entry?.dir ?? "", "source", "excerpt.md"), "utf8")).toBe(
      `${STICKY_CSS}\n`,
    );
    // The repository hit: cloned at its default branch, licence from the search answer.
    expect(manifest?.resources.find((record) => record.path === repoPath)).toMatchObject({
      ref: "main",
      commit,
      licence: "MIT",
    });

    // The two results that could not be used are recorded, with the reason.
    expect(result.failed).toEqual([
      {
        connector: "json:docs",
        stage: "fetch",
        path: "file:///etc/passwd",
        code: "wiki.search-result-scheme",
        error: expect.stringMatching(/may only name an http or https resource, not a file URL/),
      },
      {
        connector: "json:docs",
        stage: "fetch",
        path: `${web.url}/docs/gone.html`,
        code: "wiki.url-status",
        error: expect.stringMatching(/answered HTTP 404/),
      },
    ]);
    const recordText = await readFile(join(pool, "pool.json"), "utf8");
    expect(recordText).not.toContain(TOKEN);
    const record = poolRecordSchema.parse(JSON.parse(recordText));
    expect(record.acquisitions[0]?.terms).toEqual(terms);
    expect(record.acquisitions[0]?.searches?.map((each) => [each.connector, each.hits])).toEqual([
      [`github:repositories@${web.url}/api/v3`, 1],
      [`github:code@${web.url}/api/v3`, 1],
      ["json:docs", 3],
    ]);
    expect(record.acquisitions[0]?.failed).toHaveLength(2);

    // The offline wiki is untouched, and the token went to the API only, never to a result.
    expect((await listEntries(offline)).map((each) => each.meta.skill_id)).toEqual(before);
    expect(resultAuthorisations).toEqual(["(none)"]);
  });

  it("refuses a code hit whose file is outside the repository or absent, and keeps a server's message from writing control characters", async () => {
    const environment = { env: { GITHUB_TOKEN: TOKEN }, cwd: root, where: { field: "--search" } };
    const result = await acquireOnline({
      query: TASK,
      pool: join(root, "pool-4"),
      offlineWiki: join(root, "offline"),
      domain: "web-frontend",
      backends: [
        createSearchBackend(
          { kind: "github", search: "code", apiUrl: `${web.url}/api/evil` },
          environment,
        ),
        createSearchBackend(
          { kind: "github", search: "repositories", apiUrl: `${web.url}/api/spoof` },
          environment,
        ),
      ],
      model: distiller(),
      budget: 5,
      runner: new UnavailableRunner("no code"),
    });
    expect(result.failed.map((each) => [each.stage, each.code])).toEqual([
      ["fetch", "wiki.search-result-file"],
      ["fetch", "wiki.search-result-file"],
      ["search", "wiki.search-rate-limited"],
    ]);
    expect(result.failed[0]?.error).toMatch(/has no file "\.\.\/\.\.\/\.\.\/\.\.\/etc\/passwd"$/);
    expect(result.failed[1]?.error).toMatch(/has no file "css\/missing\.css"$/);
    expect(result.failed[2]?.error).toContain("slow down [2J [31mFAKE PROMPT$ more");
    // (The escape characters themselves, \u001b, \r and \n, are gone.)
    expect(result.failed[2]?.error).not.toMatch(/\p{Cc}/u);
    expect(result.resources).toBe(0);
    expect(result.poolSize).toBe(0);
  });

  it("records a backend that is down, slow, rate-limited or answers garbage, and acquires from the others", async () => {
    const environment = { env: {}, cwd: root, where: { field: "--search" } };
    const endpoint = (name: string, template: string) =>
      createSearchBackend(
        { kind: "json-endpoint", name, template, results: "$.results[*].url" },
        environment,
      );
    const pool = join(root, "pool-2");
    const down = await closedPort();
    const started = Date.now();
    const result = await acquireOnline({
      query: TASK,
      pool,
      offlineWiki: join(root, "offline"),
      domain: "web-frontend",
      backends: [
        endpoint("down", `http://127.0.0.1:${down}/search?q={searchTerms}`),
        endpoint("slow", `${web.url}/stall?q={searchTerms}`),
        endpoint("garbage", `${web.url}/garbage?q={searchTerms}`),
        createSearchBackend(
          { kind: "github", search: "repositories", apiUrl: `${web.url}/api/limited` },
          environment,
        ),
        endpoint("busy", `${web.url}/busy?q={searchTerms}`),
        endpoint("docs", `${web.url}/opensearch?q={searchTerms}`),
      ],
      model: distiller(),
      budget: 10,
      searchTimeoutMs: 600,
      runner: new UnavailableRunner("no code"),
    });
    // The stalled endpoint never answers; 40 s leaves a loaded machine room.
    expect(Date.now() - started).toBeLessThan(40_000);
    const searchFailures = result.failed.filter((each) => each.stage === "search");
    expect(searchFailures.map((each) => [each.connector, each.code])).toEqual([
      ["json:down", "wiki.search-unreachable"],
      ["json:slow", "wiki.search-timeout"],
      ["json:garbage", "wiki.search-invalid-answer"],
      [`github:repositories@${web.url}/api/limited`, "wiki.search-rate-limited"],
      ["json:busy", "wiki.search-rate-limited"],
    ]);
    const messages = searchFailures.map((each) => each.error);
    expect(messages[0]).toMatch(
      new RegExp(
        `^search json:down: GET http://127\\.0\\.0\\.1:${down}/search\\?q=sticky%20table%20header%20stays%20visible%20rows failed: ECONNREFUSED$`,
      ),
    );
    expect(messages[1]).toMatch(/no complete answer within 0\.6 s$/);
    expect(messages[2]).toMatch(
      /the answer is not JSON \(Content-Type "text\/html", starts "<html><body>Service/,
    );
    // x-ratelimit-reset 1893456000 is 2030-01-01T00:00:00Z.
    expect(messages[3]).toMatch(
      /rate-limited \(HTTP 403 Forbidden: API rate limit exceeded for 127\.0\.0\.1\.\); retry after 2030-01-01T00:00:00\.000Z \(x-ratelimit-reset\)$/,
    );
    expect(messages[4]).toMatch(
      /rate-limited \(HTTP 429 Too Many Requests: Too many requests\); retry after 30 s \(retry-after\)$/,
    );
    // The one backend that answered still filled the pool.
    expect(result.allFailed).toBe(false);
    expect(result.summary?.accepted).toBe(1);
    expect(result.poolSize).toBe(1);
  });

  it("from the CLI: exits 3 with every failure named when no backend answers, and leaves no pool entry behind", async () => {
    const pool = join(root, "pool-3");
    const down = await closedPort();
    const run = await runInProcess(
      [
        "wiki",
        "search",
        TASK,
        "--wiki",
        join(root, "offline"),
        "--online",
        "--domain",
        "web-frontend",
        "--model",
        "anthropic:claude-haiku-4-5",
        "--pool",
        pool,
        "--search",
        "github",
        `json:http://127.0.0.1:${down}/?q={searchTerms}`,
        "--results-path",
        "$.results[*].url",
        "--github-api-url",
        `${web.url}/garbage`,
        "--json",
      ],
      {
        cwd: root,
        env: {
          PATH: process.env.PATH,
          GITHUB_TOKEN: TOKEN,
          ANTHROPIC_API_KEY: "t",
          ANTHROPIC_BASE_URL: model.url,
        },
      },
    );
    expect(run.code).toBe(3);
    expect(run.stdout).not.toContain(TOKEN);
    expect(run.stderr).not.toContain(TOKEN);
    const document = JSON.parse(run.stdout) as {
      online: {
        triggered: boolean;
        all_failed: boolean;
        failed: { connector: string; code: string }[];
        pool_size: number;
      };
    };
    expect(document.online).toMatchObject({ triggered: true, all_failed: true, pool_size: 0 });
    expect(document.online.failed.map((each) => [each.connector, each.code])).toEqual([
      [`github:repositories@${web.url}/garbage`, "wiki.search-status"],
      [`json:127.0.0.1:${down}`, "wiki.search-unreachable"],
    ]);
    // The acquisition is recorded; nothing else was written.
    expect(await readdir(pool)).toEqual(["pool.json"]);
    expect(existsSync(join(pool, "web-frontend"))).toBe(false);
  });

  it("from the CLI: refuses a code search without a token and a json backend without a results path, before searching", async () => {
    const base = [
      "wiki",
      "search",
      TASK,
      "--wiki",
      join(root, "offline"),
      "--online",
      "--domain",
      "web-frontend",
      "--model",
      "anthropic:claude-haiku-4-5",
    ];
    const noToken = await runInProcess([...base, "--search", "github:code"], {
      cwd: root,
      env: { PATH: process.env.PATH, ANTHROPIC_API_KEY: "t" },
    });
    expect(noToken.code).toBe(2);
    expect(noToken.stderr).toMatch(/GitHub code search needs a token: set GITHUB_TOKEN/);
    const noPath = await runInProcess(
      [...base, "--search", "json:https://s.example/?q={searchTerms}"],
      {
        cwd: root,
        env: { PATH: process.env.PATH, ANTHROPIC_API_KEY: "t" },
      },
    );
    expect(noPath.code).toBe(2);
    expect(noPath.stderr).toMatch(/needs --results-path/);
    expect(apiRequests.filter((each) => each.path.includes("garbage"))).toEqual([]);
  });
});
