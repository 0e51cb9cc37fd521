import { cp, mkdir, readdir, readFile, rm, stat, truncate, writeFile } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  cleanupsAfterEach,
  selfLoopingLink,
  temporaryDirectoryIn,
} from "../../test/support/temporary.js";
import {
  generatedMetas,
  generatedQueries,
  writeGeneratedWiki,
} from "../../test/support/wiki-cards.js";
import { packageRoot } from "../core/paths.js";
import { defaultThresholds } from "./meta.js";
import { type CardSearch, openCardSearch, searchSkills, WikiSearch } from "./search.js";
import { IndexedWikiSearch, searchIndexPath, writeSearchIndex } from "./search-index.js";
import { LOCK_FILE, writeEntry } from "./store.js";

const cleanups = cleanupsAfterEach();
const domains = ["web-frontend", "data-science", "devops"];
const options = { domains, vocabularySize: 300, seed: 7 };
let shared: string;

beforeAll(async () => {
  shared = await temporaryDirectoryIn([], "skillsmith-search-index-");
  await writeGeneratedWiki(shared, 240, options);
  await writeSearchIndex(shared);
});
afterAll(async () => {
  await rm(shared, { recursive: true, force: true });
});

const openIndexed = async (root: string, domain?: string): Promise<IndexedWikiSearch> => {
  const search = await IndexedWikiSearch.open(root, defaultThresholds, domain);
  if (search === undefined) throw new Error("no fresh index");
  return search;
};

/** Every strategy that needs no model, over both searches, as JSON (so doubles compare exactly). */
async function answers(search: CardSearch, query: string): Promise<string> {
  const results = [];
  for (const includeUnverified of [false, true]) {
    for (const strategy of ["bm25-only", "none", "random"] as const)
      results.push(await searchSkills(search, query, { strategy, includeUnverified, seed: 3 }));
    // The shortlist settings the index also answers: the public code's pool and visual boost.
    results.push(
      await searchSkills(search, query, {
        includeUnverified,
        shortlistSize: "max(5n,25)",
        visualBoost: 1.25,
      }),
    );
    // The public code's settings (its three fields, k1, boost, pool, statistics over the
    // searched entries) and its fields with statistics over every entry: the second posting set.
    const publicFields = ["name", "applicability", "tags"] as const;
    results.push(
      await searchSkills(search, query, {
        includeUnverified,
        shortlistSize: "max(5n,25)",
        fields: publicFields,
        visualBoost: 1.25,
        k1: 1.5,
        idfOver: "searched",
      }),
    );
    results.push(search.shortlist(query, { k: 240, includeUnverified, fields: publicFields }));
    results.push(search.eligibleCards(includeUnverified).length);
    results.push(search.shortlist(query, { k: 240, includeUnverified }));
  }
  return JSON.stringify(results);
}

describe("the search index file", () => {
  it("answers exactly as the entries read into memory, in every domain and over all", async () => {
    const queries = [...generatedQueries(40, options), "Café ÜNÏCODE", "", "ka ka ka lo"];
    for (const domain of [undefined, ...domains, "no-such-domain"]) {
      const memory = await WikiSearch.open(shared, domain);
      const indexed = await openIndexed(shared, domain);
      try {
        expect(indexed.size).toBe(memory.size);
        for (const query of queries)
          expect({ domain, query, answer: await answers(indexed, query) }).toEqual({
            domain,
            query,
            answer: await answers(memory, query),
          });
      } finally {
        indexed.close();
      }
    }
    // The comparison compared something: most queries find cards, across domains.
    const all = await openIndexed(shared);
    expect(all.size).toBe(240);
    expect(all.shortlist(generatedQueries(1, options)[0] ?? "").length).toBeGreaterThan(0);
    all.close();
    // 43 queries in every domain, each against the index and the entries: 53 s at load 37 with
    // two busy loops.
  }, 120_000);

  it("leaves searches over fields it holds no posting set for to the entries, which answer them", async () => {
    const fields = ["name", "tags"] as const;
    const search = await openCardSearch(shared, undefined, { fields });
    expect(search).toBeInstanceOf(WikiSearch);
    const indexed = await openIndexed(shared);
    expect(() => indexed.shortlist("kalo", { fields })).toThrow(/not name, tags/);
    indexed.close();
    // The public code's three fields have a posting set of their own.
    const publicCode = await openCardSearch(shared, undefined, {
      fields: ["name", "applicability", "tags"],
    });
    expect(publicCode).toBeInstanceOf(IndexedWikiSearch);
    (publicCode as IndexedWikiSearch).close();
    // Reads the 240 entries for the field-limited search: 34 s at load 37 with two busy loops.
  }, 120_000);

  it("goes stale when an entry is added, replaced or removed, or a domain appears", async () => {
    const root = await temporaryDirectoryIn(cleanups, "skillsmith-search-stale-");
    const metas = await writeGeneratedWiki(root, 30, options);
    const extra = [...generatedMetas(1, { ...options, seed: 8 }, 30)];
    const changes: (() => Promise<unknown>)[] = [
      () => writeEntry(root, { meta: extra[0]!, files: {} }),
      () =>
        writeEntry(root, {
          meta: { ...metas[3]!, applicability: "Use when replaced text appears." },
          files: {},
        }),
      () => rm(join(root, metas[5]!.domain, metas[5]!.skill_id), { recursive: true }),
      () => mkdir(join(root, "new-domain")),
    ];
    for (const change of changes) {
      await writeSearchIndex(root);
      (await openIndexed(root)).close();
      await change();
      expect(await IndexedWikiSearch.open(root, defaultThresholds)).toBeUndefined();
      // A search rebuilds it and answers from the changed wiki.
      const search = await openCardSearch(root);
      expect(search).toBeInstanceOf(IndexedWikiSearch);
      expect(await answers(search, "replaced text")).toBe(
        await answers(await WikiSearch.open(root), "replaced text"),
      );
      (search as IndexedWikiSearch).close();
    }
  });

  it("rebuilds a damaged, truncated or foreign index instead of trusting it", async () => {
    const root = await temporaryDirectoryIn(cleanups, "skillsmith-search-damaged-");
    await writeGeneratedWiki(root, 40, options);
    const query = generatedQueries(1, options)[0] ?? "";
    const expected = await answers(await WikiSearch.open(root), query);
    const damages: ((path: string) => Promise<void>)[] = [
      async (path) => truncate(path, (await stat(path)).size - 10),
      (path) => truncate(path, 12),
      (path) => writeFile(path, "not an index at all"),
    ];
    for (const damage of damages) {
      await writeSearchIndex(root);
      await damage(searchIndexPath(root));
      expect(await IndexedWikiSearch.open(root, defaultThresholds)).toBeUndefined();
      const search = await openCardSearch(root);
      expect(search).toBeInstanceOf(IndexedWikiSearch);
      expect(await answers(search, query)).toBe(expected);
      (search as IndexedWikiSearch).close();
    }
  });

  it("never answers a card the wiki does not hold: an edited index or an entry edited in place", async () => {
    const root = await temporaryDirectoryIn(cleanups, "skillsmith-search-edited-");
    const metas = await writeGeneratedWiki(root, 40, options);
    const victim = metas[7]!;
    const query = victim.skill_name;
    const idsIn = (result: { shortlist: { card: { skill_id: string } }[] }) =>
      result.shortlist.map((hit) => hit.card.skill_id);
    const wikiIds = new Set(metas.map((meta) => meta.skill_id));
    /** The index file with one byte string replaced by another of the same length. */
    const editIndex = async (from: string, to: string) => {
      const path = searchIndexPath(root);
      const bytes = await readFile(path);
      const at = bytes.indexOf(Buffer.from(from));
      expect(at, `"${from}" in the index`).toBeGreaterThan(0);
      Buffer.from(to).copy(bytes, at);
      await writeFile(path, bytes);
    };
    const attacks: { name: string; attack: () => Promise<void>; absent: string }[] = [
      {
        // A card pointing at an entry that does not exist (the id's last hex digit changed).
        name: "forged id",
        attack: () =>
          editIndex(
            victim.skill_id,
            `${victim.skill_id.slice(0, 39)}${victim.skill_id.endsWith("0") ? "1" : "0"}`,
          ),
        absent: `${victim.skill_id.slice(0, 39)}${victim.skill_id.endsWith("0") ? "1" : "0"}`,
      },
      {
        // The card's text changed in the index (what a selector or an MCP client would read).
        name: "forged text",
        attack: () =>
          editIndex(
            `"applicability":"${victim.applicability.slice(0, 8)}`,
            `"applicability":"INJECTED`,
          ),
        absent: "INJECTED",
      },
      {
        // meta.json rewritten in place, not through a build: the folders' stamp stays the same.
        name: "edited in place",
        attack: () =>
          writeFile(
            join(root, victim.domain, victim.skill_id, "meta.json"),
            `${JSON.stringify({ ...victim, skill_name: `${victim.skill_name} renamed` }, null, 2)}\n`,
          ),
        absent: `"skill_name":"${victim.skill_name}"`,
      },
    ];
    for (const { name, attack, absent } of attacks) {
      await writeSearchIndex(root);
      await attack();
      const search = await openCardSearch(root);
      // The stamp still matches (no folder changed), so the index opens...
      expect(search, name).toBeInstanceOf(IndexedWikiSearch);
      const result = await searchSkills(search, query, { includeUnverified: true });
      // ...but what it answers comes from the wiki's entries, never from the edited index.
      const text = JSON.stringify(result);
      expect(text, name).not.toContain(absent);
      expect(
        idsIn(result).every((id) => wikiIds.has(id)),
        name,
      ).toBe(true);
      const truth = await searchSkills(await WikiSearch.open(root), query, {
        includeUnverified: true,
      });
      expect(text, name).toBe(JSON.stringify(truth));
      expect(idsIn(result), name).toContain(victim.skill_id);
    }
    // The index was rebuilt from the entries: the next search answers from it without a mismatch.
    const rebuilt = await openIndexed(root);
    expect(() => rebuilt.shortlist(query, { includeUnverified: true })).not.toThrow();
    rebuilt.close();
  });

  it("refuses an index that is there but unreadable instead of taking it for a missing one", async () => {
    const root = await temporaryDirectoryIn(cleanups, "skillsmith-search-unreadable-");
    await writeGeneratedWiki(root, 10, options);
    const path = searchIndexPath(root);
    await mkdir(dirname(path), { recursive: true });
    // A link loop (ELOOP on open) and a folder (EISDIR on the first read): both exist.
    const unreadable: ((at: string) => Promise<unknown>)[] = [
      (at) => selfLoopingLink(dirname(at), basename(at)),
      (at) => mkdir(at),
    ];
    for (const make of unreadable) {
      await rm(path, { recursive: true, force: true });
      await make(path);
      await expect(IndexedWikiSearch.open(root, defaultThresholds)).rejects.toMatchObject({
        code: "core.file-unreadable",
        location: { file: path },
      });
    }
  });

  it("leaves the index alone while a live build holds the wiki, and reads the entries", async () => {
    const root = await temporaryDirectoryIn(cleanups, "skillsmith-search-building-");
    await writeGeneratedWiki(root, 20, options);
    await writeFile(join(root, LOCK_FILE), JSON.stringify({ pid: process.pid }));
    const search = await openCardSearch(root);
    expect(search).toBeInstanceOf(WikiSearch);
    expect(await readdir(root)).not.toContain(".index");
    // A lock left by a process that is gone holds nothing: the index is built.
    await writeFile(join(root, LOCK_FILE), JSON.stringify({ pid: 2 ** 22 + 17 }));
    const after = await openCardSearch(root);
    expect(after).toBeInstanceOf(IndexedWikiSearch);
    (after as IndexedWikiSearch).close();
  });

  it("lets concurrent rebuilds finish with one fresh index", async () => {
    const root = await temporaryDirectoryIn(cleanups, "skillsmith-search-concurrent-");
    await writeGeneratedWiki(root, 60, options);
    const searches = await Promise.all(Array.from({ length: 4 }, () => openCardSearch(root)));
    for (const search of searches) {
      expect(search).toBeInstanceOf(IndexedWikiSearch);
      (search as IndexedWikiSearch).close();
    }
    expect((await readdir(join(root, ".index"))).sort()).toEqual(["search.idx"]);
  });

  it("indexes the example wiki on first search and answers as before", async () => {
    const root = await temporaryDirectoryIn(cleanups, "skillsmith-search-example-");
    await cp(resolve(packageRoot(), "examples", "wiki"), root, { recursive: true });
    const memory = await WikiSearch.open(root);
    const search = await openCardSearch(root);
    expect(search).toBeInstanceOf(IndexedWikiSearch);
    for (const query of ["navigation menu that wraps on small screens", "sticky table header"])
      expect(await answers(search, query)).toBe(await answers(memory, query));
    (search as IndexedWikiSearch).close();
  });
});
