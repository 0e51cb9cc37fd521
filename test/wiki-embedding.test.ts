/**
 * The embedding strategies over a small hand-written wiki, against the scripted server's
 * `/v1/embeddings` (a bag-of-words model: texts sharing words come out similar). Expected winners
 * are worked out from word overlap; the card vector cache is checked by counting the requests
 * the server recorded.
 */
import { existsSync } from "node:fs";
import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEmbeddingClient, type EmbeddingClient } from "../src/model/index.js";
import { type ScriptedServer, startScriptedServer } from "../src/model/scripted/server.js";
import { searchSkills, WikiSearch } from "../src/wiki/search.js";
import { findEntry, writeEntry } from "../src/wiki/store.js";
import { runInProcess } from "./support/cli.js";
import { handSkillId, handSkills, writeHandWiki } from "./support/wiki.js";

let root: string;
let wiki: string;
let server: ScriptedServer;

const idOf = (name: string) => {
  const found = handSkills.find((each) => each.name === name);
  if (found === undefined) throw new Error(name);
  return handSkillId(found);
};
/** The card text the protocol names: name ⊕ tags ⊕ applicability ⊕ category path. */
const cardText = (each: (typeof handSkills)[number]) =>
  [each.name, each.tags.join(" "), each.applicability, each.category.join(" ")].join("\n");
const verifiedCards = handSkills.filter((each) => each.status === "verified").map(cardText);

/** Inputs of the embedding requests recorded since `from`. */
function embeddedSince(from: number): string[][] {
  return server.requests
    .slice(from)
    .filter((request) => request.api === "openai-embeddings")
    .map((request) => {
      const input = (request.body as { input: string | string[] }).input;
      return typeof input === "string" ? [input] : input;
    });
}

function client(model = "text-embedding-3-small"): EmbeddingClient {
  return createEmbeddingClient({
    spec: `openai:${model}`,
    env: { OPENAI_API_KEY: "test", OPENAI_BASE_URL: `${server.url}/v1` },
    cwd: root,
  });
}

// The query shares read, a, comma, separated, file, into and rows with the CSV card ("When a
// comma-separated file must be read into rows."); the navigation card shares only "a", the
// contrast card only "read", the grid card nothing. So the CSV card must rank first.
const CSV_QUERY = "read a comma separated file into rows";

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "skillsmith-wiki-embedding-"));
  wiki = join(root, "wiki");
  await writeHandWiki(wiki);
  server = await startScriptedServer({ script: { fallback: { text: "" } } });
});
afterAll(async () => {
  await server?.close();
  await rm(root, { recursive: true, force: true });
});

describe("embedding strategy", () => {
  it("embeds every eligible card once, ranks by cosine, and a second search embeds only the query", async () => {
    const embedder = client();
    const start = server.requests.length;
    const first = await searchSkills(await WikiSearch.open(wiki), CSV_QUERY, {
      strategy: "embedding",
      embedding: embedder,
      max: 2,
    });
    expect(first.selected[0]?.card.skill_id).toBe(idOf("Parse CSV rows"));
    expect(first.selected).toHaveLength(2);
    expect(first.selected[0]?.reason).toMatch(/^cosine 0\.\d{3}$/);
    expect(first.embedding_model).toBe("openai:text-embedding-3-small");
    const calls = embeddedSince(start);
    // One call for the cards (verified only: the reference-only float card is not eligible),
    // one for the query.
    expect(calls).toHaveLength(2);
    expect([...(calls[0] ?? [])].sort()).toEqual([...verifiedCards].sort());
    expect(calls[1]).toEqual([CSV_QUERY]);
    const cacheFiles = await readdir(join(wiki, ".cache", "embeddings"));
    expect(cacheFiles).toHaveLength(1);

    // A new search over the same wiki (as a new process would open it) reads the cache.
    const again = server.requests.length;
    const second = await searchSkills(await WikiSearch.open(wiki), CSV_QUERY, {
      strategy: "embedding",
      embedding: client(),
      max: 2,
    });
    expect(embeddedSince(again)).toEqual([[CSV_QUERY]]);
    expect(second.selected.map((pick) => pick.card.skill_id)).toEqual(
      first.selected.map((pick) => pick.card.skill_id),
    );
  });

  it("re-embeds a card whose text changed, and every card for another model", async () => {
    const grid = await findEntry(wiki, idOf("Center with CSS grid"));
    if (grid === undefined) throw new Error("missing entry");
    const applicability = "When rows of a comma separated table must be centered.";
    await writeEntry(wiki, {
      meta: { ...grid.meta, applicability },
      files: { "text/overview.md": "# Center\n", "code/main.sh": "cat\n" },
    });
    const start = server.requests.length;
    await searchSkills(await WikiSearch.open(wiki), CSV_QUERY, {
      strategy: "embedding",
      embedding: client(),
    });
    const changed = handSkills.find((each) => each.name === "Center with CSS grid");
    if (changed === undefined) throw new Error("missing hand skill");
    expect(embeddedSince(start)).toEqual([[cardText({ ...changed, applicability })], [CSV_QUERY]]);

    const other = server.requests.length;
    await searchSkills(await WikiSearch.open(wiki), CSV_QUERY, {
      strategy: "embedding",
      embedding: client("other-embedder"),
    });
    const calls = embeddedSince(other);
    expect(calls[0]).toHaveLength(verifiedCards.length);
    expect(server.requests.at(-1)?.model).toBe("other-embedder");
    expect(await readdir(join(wiki, ".cache", "embeddings"))).toHaveLength(2);
  });

  it("bm25+embedding re-ranks only the BM25 shortlist", async () => {
    const search = await WikiSearch.open(wiki);
    const start = server.requests.length;
    const result = await searchSkills(search, "rows of a csv file", {
      strategy: "bm25+embedding",
      embedding: client("rerank-embedder"),
    });
    const shortlistIds = result.shortlist.map((hit) => hit.card.skill_id);
    expect(shortlistIds.length).toBeGreaterThan(0);
    expect(shortlistIds.length).toBeLessThan(verifiedCards.length);
    expect(result.selected[0]?.card.skill_id).toBe(idOf("Parse CSV rows"));
    for (const pick of result.selected) expect(shortlistIds).toContain(pick.card.skill_id);
    const calls = embeddedSince(start);
    expect(calls[0]).toHaveLength(shortlistIds.length);
  });
});

describe("wiki search --strategy embedding (CLI)", () => {
  const env = {
    PATH: process.env.PATH,
    OPENAI_API_KEY: "test",
    OPENAI_BASE_URL: "",
  };

  it("takes the model from the flag, else SKILLSMITH_EMBEDDING_MODEL, else the config file, else exits 2 naming both", async () => {
    const base = { ...env, OPENAI_BASE_URL: `${server.url}/v1` };
    const search = ["wiki", "search", CSV_QUERY, "--wiki", "wiki", "--strategy", "embedding"];
    const byFlag = await runInProcess(
      [...search, "--embedding-model", "openai:flag-embedder", "--json"],
      { cwd: root, env: { ...base, SKILLSMITH_EMBEDDING_MODEL: "openai:env-embedder" } },
    );
    expect(byFlag.code).toBe(0);
    const parsed = JSON.parse(byFlag.stdout) as {
      selected: { card: { skill_id: string } }[];
      embedding_model: string;
    };
    expect(parsed.selected[0]?.card.skill_id).toBe(idOf("Parse CSV rows"));
    expect(parsed.embedding_model).toBe("openai:flag-embedder");
    expect(server.requests.at(-1)?.model).toBe("flag-embedder");

    const start = server.requests.length;
    const byEnvironment = await runInProcess(search, {
      cwd: root,
      env: { ...base, SKILLSMITH_EMBEDDING_MODEL: "openai:env-embedder" },
    });
    expect(byEnvironment.code).toBe(0);
    expect(byEnvironment.stdout).toContain("selected by embedding (openai:env-embedder)");
    expect(embeddedSince(start)[0]).toHaveLength(verifiedCards.length);
    // Run again: the cards come from the wiki's cache, only the query is embedded.
    const cached = server.requests.length;
    expect(
      (
        await runInProcess(search, {
          cwd: root,
          env: { ...base, SKILLSMITH_EMBEDDING_MODEL: "openai:env-embedder" },
        })
      ).code,
    ).toBe(0);
    expect(embeddedSince(cached)).toEqual([[CSV_QUERY]]);

    await writeFile(
      join(root, "skillsmith.config.json"),
      JSON.stringify({ wiki: { embeddingModel: "openai:config-embedder" } }),
    );
    const byConfig = await runInProcess(search, { cwd: root, env: base });
    expect(byConfig.code).toBe(0);
    expect(byConfig.stdout).toContain("(openai:config-embedder)");
    await rm(join(root, "skillsmith.config.json"));

    const none = await runInProcess(search, { cwd: root, env: base });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("--embedding-model");
    expect(none.stderr).toContain("SKILLSMITH_EMBEDDING_MODEL");
    expect(existsSync(join(root, "skillsmith.config.json"))).toBe(false);
  });
});
