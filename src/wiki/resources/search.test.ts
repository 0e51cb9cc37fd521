import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  cleanupsAfterEach,
  selfLoopingLink,
  temporaryDirectoryIn,
} from "../../../test/support/temporary.js";
import {
  backendConfigOf,
  blobLocation,
  createSearchBackend,
  fillTemplate,
  parseJsonPath,
  registerSearchBackend,
  resourceText,
  searchBackendKinds,
  selectJsonPath,
} from "./search.js";

const environment = { env: {}, cwd: "/", where: { field: "--search" } };

describe("JSON paths", () => {
  const answer = {
    items: [{ link: "https://a.example/1" }, { link: "https://a.example/2" }],
    meta: { "total-count": 2 },
  };

  it("selects keys, wildcards, indexes and quoted keys", () => {
    const select = (path: string) => {
      const steps = parseJsonPath(path);
      if (typeof steps === "string") throw new Error(steps);
      return selectJsonPath(answer, steps);
    };
    expect(select("$.items[*].link")).toEqual({
      values: ["https://a.example/1", "https://a.example/2"],
    });
    expect(select("$.items[1].link")).toEqual({ values: ["https://a.example/2"] });
    expect(select("$['meta']['total-count']")).toEqual({ values: [2] });
    expect(select("$.meta.*")).toEqual({ values: [2] });
    // An OpenSearch suggestions answer: [query, [terms], [descriptions], [urls]].
    const suggestions = ["q", ["a", "b"], ["", ""], ["https://x/a", "https://x/b"]];
    expect(selectJsonPath(suggestions, parseJsonPath("$[3][*]") as never)).toEqual({
      values: ["https://x/a", "https://x/b"],
    });
  });

  it("reports a path that does not fit the answer instead of finding nothing", () => {
    expect(selectJsonPath(answer, parseJsonPath("$.results[*].url") as never)).toEqual({
      missing: '$ has no "results" (it has "items", "meta")',
    });
    expect(selectJsonPath(answer, parseJsonPath("$.items.link") as never)).toEqual({
      missing: '$.items is an array, not an object with "link"',
    });
    expect(selectJsonPath({ items: [] }, parseJsonPath("$.items[*].link") as never)).toEqual({
      values: [],
    });
  });

  it("refuses paths it cannot read", () => {
    expect(parseJsonPath("items[*]")).toBe('must start with "$"');
    expect(parseJsonPath("$.items[?(@.x)]")).toBe('cannot read "[?(@.x)]"');
  });
});

describe("URL templates", () => {
  it("fills every variable URL-encoded, optional markers included", () => {
    expect(
      fillTemplate("https://s.example/api?q={searchTerms}&n={count?}&lang={language}&d={domain}", {
        searchTerms: "sticky table&header",
        count: "3",
        startIndex: "1",
        startPage: "1",
        language: "*",
        inputEncoding: "UTF-8",
        outputEncoding: "UTF-8",
        domain: "web-frontend",
        task: "t",
        apiKey: "",
      }),
    ).toBe("https://s.example/api?q=sticky%20table%26header&n=3&lang=*&d=web-frontend");
  });

  it("refuses a template with an unknown variable, without the query, or not over http(s)", () => {
    const make = (template: string) =>
      createSearchBackend({ kind: "json-endpoint", template, results: "$.items[*]" }, environment);
    expect(() => make("https://s.example/?q={query}")).toThrow(
      /template has unknown variable \{query\}/,
    );
    expect(() => make("https://s.example/?n={count}")).toThrow(
      /neither \{searchTerms\} nor \{task\}/,
    );
    expect(() => make("file:///etc/{searchTerms}")).toThrow(/must be an http or https URL/);
    expect(() => make("https://s.example/?q={searchTerms}&key={apiKey}")).toThrow(
      /name the environment variable holding it in apiKeyVariable/,
    );
    expect(() =>
      createSearchBackend(
        { kind: "json-endpoint", template: "https://s.example/?q={searchTerms}", results: "items" },
        environment,
      ),
    ).toThrow(
      /field "--search.results": search backend "json-endpoint": results path "items" must start with "\$"/,
    );
  });
});

describe("the backend registry", () => {
  it("creates registered kinds and names the registered ones for an unknown kind", () => {
    expect(searchBackendKinds()).toEqual(
      expect.arrayContaining(["folder", "github", "json-endpoint"]),
    );
    expect(() => createSearchBackend({ kind: "bing" }, environment)).toThrow(
      /unknown search backend kind "bing"; registered: .*folder, github, json-endpoint/,
    );
    registerSearchBackend("fixed", {
      schema: z.strictObject({ kind: z.literal("fixed"), url: z.url() }),
      create: (config) => ({
        specificationVersion: "v1",
        kind: "fixed",
        name: `fixed:${config.url}`,
        search: async () => ({ request: "none", hits: [{ kind: "url", url: config.url }] }),
      }),
    });
    expect(searchBackendKinds()).toContain("fixed");
    const fixed = createSearchBackend(
      { kind: "fixed", url: "https://x.example/a.html" },
      environment,
    );
    expect(fixed.name).toBe("fixed:https://x.example/a.html");
    expect(() => createSearchBackend({ kind: "fixed", url: 3 }, environment)).toThrow(
      /field "--search.url": search backend "fixed"/,
    );
  });

  it("needs a token for GitHub code search and says which variable", () => {
    expect(() => createSearchBackend({ kind: "github", search: "code" }, environment)).toThrow(
      /GitHub code search needs a token: set GITHUB_TOKEN/,
    );
    const backend = createSearchBackend(
      { kind: "github", search: "code", tokenVariable: "MY_TOKEN" },
      { ...environment, env: { MY_TOKEN: "secret", GITHUB_API_URL: "https://ghe.example/api/v3" } },
    );
    expect(backend.name).toBe("github:code@https://ghe.example/api/v3");
    expect(backend.name).not.toContain("secret");
  });

  it("reads --search values", () => {
    expect(backendConfigOf("github", {})).toEqual({ kind: "github", search: "repositories" });
    expect(backendConfigOf("github:code", { githubApiUrl: "http://127.0.0.1:1" })).toEqual({
      kind: "github",
      search: "code",
      apiUrl: "http://127.0.0.1:1",
    });
    expect(
      backendConfigOf("json:https://s.example/?q={searchTerms}", { resultsPath: "$.r[*]" }),
    ).toEqual({
      kind: "json-endpoint",
      template: "https://s.example/?q={searchTerms}",
      results: "$.r[*]",
    });
    expect(() => backendConfigOf("json:https://s.example/?q={searchTerms}", {})).toThrow(
      /needs --results-path/,
    );
    expect(() => backendConfigOf("bing", {})).toThrow(
      /expected github, github:code, folder:<dir> or json:<url template>/,
    );
  });
});

describe("blobLocation", () => {
  it("reads the commit and the file of a code search hit's html_url", () => {
    expect(
      blobLocation(
        "https://github.com/jquery/jquery/blob/825ac3773694e0cd23ee74895fd5aeb535b27da4/src/attributes/classes.js",
      ),
    ).toEqual({
      ref: "825ac3773694e0cd23ee74895fd5aeb535b27da4",
      path: "src/attributes/classes.js",
    });
    expect(blobLocation("https://github.com/o/r/blob/main/a%20b/c.css")).toEqual({
      ref: "main",
      path: "a b/c.css",
    });
    expect(blobLocation("https://github.com/o/r")).toBeUndefined();
  });
});

describe("a local folder of resources", () => {
  const cleanups = cleanupsAfterEach();

  it("says a missing folder is missing and an unreadable one is unreadable", async () => {
    const parent = await temporaryDirectoryIn(cleanups, "search-folder-");
    const config = (path: string) => ({ kind: "folder", path });
    const where = { ...environment, cwd: parent };
    expect(() => createSearchBackend(config("absent"), where)).toThrow(/no such folder/);
    await selfLoopingLink(parent, "loop");
    expect(() => createSearchBackend(config("loop"), where)).toThrow(
      expect.objectContaining({
        code: "core.file-unreadable",
        location: { file: join(parent, "loop") },
      }),
    );
  });

  it("ranks by a video's subtitles when present, and refuses subtitles that cannot be read", async () => {
    const folder = await temporaryDirectoryIn(cleanups, "search-text-");
    const video = (name: string) => ({
      absolutePath: join(folder, `${name}.mp4`),
      path: `${name}.mp4`,
      type: "video" as const,
    });
    await writeFile(join(folder, "talk.srt"), "1\n00:00:00,000 --> 00:00:01,000\ngrid layout\n");
    // No subtitles at all: only the name is text (the .vtt beside "talk" is missing, too).
    expect(await resourceText(video("silent"))).toBe("silent mp4\n ");
    expect(await resourceText(video("talk"))).toContain("grid layout");
    // A folder where the subtitles should be: it is there, so it is not silently skipped.
    await mkdir(join(folder, "broken.srt"));
    await expect(resourceText(video("broken"))).rejects.toMatchObject({
      code: "core.file-unreadable",
      location: { file: join(folder, "broken.srt") },
    });
  });
});
