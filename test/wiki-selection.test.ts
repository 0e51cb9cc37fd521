/**
 * Stage-1 selection settings: K = 20 over the four fields by default (the paper), the public
 * code's pool of max(5n, 25) over name ⊕ applicability ⊕ tags with visuals ×1.25 on request,
 * each recorded in the search result; and protocol B's numbers recorded in a new wiki's
 * manifest. Expected rankings come from a BM25 written out in this file, not from the index.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { packageRoot } from "../src/core/paths.js";
import {
  defaultThresholds,
  type ShortlistField,
  type SkillMeta,
  skillId,
  WIKI_ENTRY_FORMAT,
  wikiManifestSchema,
} from "../src/wiki/meta.js";
import {
  cardOf,
  indexedText,
  openCardSearch,
  searchSkills,
  WikiSearch,
} from "../src/wiki/search.js";
import { renderCards } from "../src/wiki/select.js";
import { loadOrCreateWikiManifest, readWikiManifest, writeEntry } from "../src/wiki/store.js";
import { runInProcess } from "./support/cli.js";

let root: string;
let wiki: string;

/** Entry i: a name, tags and applicability chosen so fields and visuals change the ranking. */
function meta(index: number): SkillMeta {
  const visual = index % 3 === 0;
  const created = "2026-01-01T00:00:00.000Z";
  const names = ["Sticky table header", "Table zebra rows", "Header banner", "Sticky footer"];
  return {
    format: WIKI_ENTRY_FORMAT,
    skill_id: skillId("web", `source-${index}.html`, 0),
    skill_name: `${names[index % names.length]} ${index}`,
    domain: "web",
    category_path: index % 2 === 0 ? ["tables"] : ["layout", "sticky"],
    tags: index % 5 === 0 ? ["table", "sticky"] : ["css"],
    applicability:
      index % 4 === 1
        ? "When a header must stay in view while a table scrolls."
        : "When a page needs it.",
    source: { type: "article" },
    provenance: [
      {
        source_path: `source-${index}.html`,
        node_index: 0,
        sha256: "0".repeat(64),
        resource_type: "article",
        licence: null,
        licence_flag: "unknown",
        locator: "paragraph 0",
      },
    ],
    modalities_present: visual ? ["text", "visual"] : ["text"],
    files: { text: ["text/overview.md"], visual: visual ? ["visual/a.png"] : [], code: [] },
    code_language: null,
    exec_ok: "unknown",
    validation_status: "verified",
    validation_note: null,
    merged: [],
    merges: [],
    findings: [],
    created,
    updated: created,
  };
}
const ENTRIES = 48;

/** Okapi BM25 as the index documents it (k1 1.2, b 0.75, idf ln(1 + (N − df + ½)/(df + ½))). */
function referenceScores(query: string, texts: readonly string[], k1 = 1.2): number[] {
  const tokens = (text: string) =>
    text
      .toLowerCase()
      .split(/[^a-z0-9]+/)
      .filter(Boolean);
  const documents = texts.map(tokens);
  const average = documents.reduce((sum, words) => sum + words.length, 0) / documents.length;
  const terms = [...new Set(tokens(query))];
  return documents.map((words) =>
    terms.reduce((score, term) => {
      const frequency = words.filter((word) => word === term).length;
      if (frequency === 0) return score;
      const containing = documents.filter((each) => each.includes(term)).length;
      const idf = Math.log(1 + (documents.length - containing + 0.5) / (containing + 0.5));
      const norm = k1 * (1 - 0.75 + (0.75 * words.length) / average);
      return score + (idf * (frequency * (k1 + 1))) / (frequency + norm);
    }, 0),
  );
}

function expectedTop(
  query: string,
  fields: readonly ShortlistField[],
  boost: number,
  k: number,
  k1 = 1.2,
): { name: string; score: number }[] {
  const metas = Array.from({ length: ENTRIES }, (_, index) => meta(index));
  const scores = referenceScores(
    query,
    metas.map((each) => indexedText(each, fields)),
    k1,
  );
  return metas
    .map((each, index) => ({
      name: each.skill_name,
      score: (scores[index] ?? 0) * (each.modalities_present.includes("visual") ? boost : 1),
      // The index numbers entries in id order and breaks ties by that number.
      id: each.skill_id,
    }))
    .filter((each) => each.score > 0)
    .sort((left, right) => right.score - left.score || (left.id < right.id ? -1 : 1))
    .slice(0, k)
    .map(({ name, score }) => ({ name, score }));
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "skillsmith-wiki-selection-"));
  wiki = join(root, "wiki");
  await loadOrCreateWikiManifest(wiki);
  for (let index = 0; index < ENTRIES; index += 1)
    await writeEntry(wiki, {
      meta: meta(index),
      files: {
        "text/overview.md": `# ${meta(index).skill_name}\n`,
        ...(index % 3 === 0 ? { "visual/a.png": "png" } : {}),
      },
    });
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const QUERY = "sticky table header";

describe("stage-1 selection settings", () => {
  it("defaults to K = 20 over name ⊕ tags ⊕ applicability ⊕ category path, no boost, and records it", async () => {
    const search = await WikiSearch.open(wiki);
    const result = await searchSkills(search, QUERY);
    expect(result.shortlist_config).toEqual({
      k: 20,
      size: "k",
      fields: ["name", "tags", "applicability", "category_path"],
      visual_boost: 1,
      bm25_k1: 1.2,
      idf_over: "all",
    });
    const expected = expectedTop(QUERY, ["name", "tags", "applicability", "category_path"], 1, 20);
    expect(result.shortlist.map((hit) => hit.card.skill_name)).toEqual(
      expected.map((each) => each.name),
    );
    result.shortlist.forEach((hit, index) => {
      expect(hit.score).toBeCloseTo(expected[index]?.score ?? -1, 9);
    });
  });

  it("takes the public code's pool of max(5n, 25) over name ⊕ applicability ⊕ tags with visuals ×1.25", async () => {
    const search = await WikiSearch.open(wiki);
    const options = {
      shortlistSize: "max(5n,25)" as const,
      fields: ["name", "applicability", "tags"] as ShortlistField[],
      visualBoost: 1.25,
    };
    const result = await searchSkills(search, QUERY, options);
    expect(result.shortlist_config).toEqual({
      k: 25,
      size: "max(5n,25)",
      fields: ["name", "tags", "applicability"],
      visual_boost: 1.25,
      bm25_k1: 1.2,
      idf_over: "all",
    });
    const expected = expectedTop(QUERY, ["name", "tags", "applicability"], 1.25, 25);
    expect(result.shortlist.map((hit) => hit.card.skill_name)).toEqual(
      expected.map((each) => each.name),
    );
    result.shortlist.forEach((hit, index) => {
      expect(hit.score).toBeCloseTo(expected[index]?.score ?? -1, 9);
    });
    // The boost changes the order: the unboosted ranking over the same fields differs.
    expect(expected.map((each) => each.name)).not.toEqual(
      expectedTop(QUERY, ["name", "tags", "applicability"], 1, 25).map((each) => each.name),
    );
    // n = 7 gives a pool of 35; n = 3 still 25.
    expect((await searchSkills(search, QUERY, { ...options, max: 7 })).shortlist).toHaveLength(35);
    expect((await searchSkills(search, QUERY, { ...options, max: 3 })).shortlist).toHaveLength(25);
  });

  it("scores with the k1 asked for (the public code's 1.5), from entries and from the index file alike", async () => {
    const fields = ["name", "applicability", "tags"] as ShortlistField[];
    const expected = expectedTop(QUERY, fields, 1.25, 25, 1.5);
    for (const search of [
      await WikiSearch.open(wiki),
      await openCardSearch(wiki, undefined, { fields }),
    ]) {
      const result = await searchSkills(search, QUERY, {
        shortlistSize: "max(5n,25)",
        fields,
        visualBoost: 1.25,
        k1: 1.5,
      });
      expect(result.shortlist_config?.bm25_k1).toBe(1.5);
      expect(result.shortlist.map((hit) => hit.card.skill_name)).toEqual(
        expected.map((each) => each.name),
      );
      result.shortlist.forEach((hit, index) => {
        expect(hit.score).toBeCloseTo(expected[index]?.score ?? -1, 9);
      });
    }
    // With the four fields the index file answers itself, at any k1.
    const indexed = await openCardSearch(wiki);
    const four = await searchSkills(indexed, QUERY, { k1: 1.5 });
    const fourExpected = expectedTop(
      QUERY,
      ["name", "tags", "applicability", "category_path"],
      1,
      20,
      1.5,
    );
    expect(four.shortlist.map((hit) => hit.score)).toEqual(
      fourExpected.map((each) => expect.closeTo(each.score, 9)),
    );
  });

  it("indexes only the fields asked for", async () => {
    const search = await WikiSearch.open(wiki);
    // "scrolls" is only in some applicabilities: without that field nothing matches it.
    expect((await searchSkills(search, "scrolls", { fields: ["name", "tags"] })).shortlist).toEqual(
      [],
    );
    expect(
      (await searchSkills(search, "scrolls", { fields: ["applicability"] })).shortlist.length,
    ).toBe(12);
  });

  it("from the CLI: --selection public-code and the single flags, recorded in --json, mistakes refused", async () => {
    const base = ["wiki", "search", QUERY, "--wiki", wiki, "--json"];
    const run = await runInProcess([...base, "--selection", "public-code"], { cwd: root, env: {} });
    expect(run.code).toBe(0);
    // The preset carries the public code's k1 = 1.5 too.
    expect(JSON.parse(run.stdout).shortlist_config).toEqual({
      k: 25,
      size: "max(5n,25)",
      fields: ["name", "tags", "applicability"],
      visual_boost: 1.25,
      bm25_k1: 1.5,
      idf_over: "searched",
    });
    const mixed = await runInProcess(
      [...base, "--selection", "public-code", "--shortlist-size", "10", "--visual-boost", "1"],
      { cwd: root, env: {} },
    );
    expect(JSON.parse(mixed.stdout).shortlist_config).toEqual({
      k: 10,
      size: "k",
      fields: ["name", "tags", "applicability"],
      visual_boost: 1,
      bm25_k1: 1.5,
      idf_over: "searched",
    });
    const text = await runInProcess(["wiki", "search", QUERY, "--wiki", wiki], {
      cwd: root,
      env: {},
    });
    expect(text.stdout).toContain(
      "— K 20 (k) over name ⊕ tags ⊕ applicability ⊕ category_path, visual boost ×1:",
    );
    const badField = await runInProcess([...base, "--fields", "name,summary"], {
      cwd: root,
      env: {},
    });
    expect(badField.code).toBe(2);
    expect(badField.stderr).toContain("--fields: unknown field summary");
    const badBoost = await runInProcess([...base, "--visual-boost", "0.5"], { cwd: root, env: {} });
    expect(badBoost.code).toBe(2);
  });
});

describe("protocol B's numbers in the wiki manifest", () => {
  it("records every default in a new wiki.json, and reads an older one with the same defaults", async () => {
    const written = wikiManifestSchema.parse(
      JSON.parse(await readFile(join(wiki, "wiki.json"), "utf8")),
    );
    // protocols.md, section B: K = 20, n = 5, budget ≤ 100, cards 200–500 tokens.
    expect(written.thresholds).toMatchObject({
      shortlist_k: 20,
      shortlist_size: "k",
      shortlist_fields: ["name", "tags", "applicability", "category_path"],
      shortlist_visual_boost: 1,
      select_max: 5,
      online_budget_max: 100,
      card_max_tokens: 500,
    });
    const raw = JSON.parse(await readFile(join(wiki, "wiki.json"), "utf8")) as {
      thresholds: Record<string, unknown>;
    };
    expect(Object.keys(raw.thresholds).sort()).toEqual(Object.keys(defaultThresholds).sort());
    // A wiki.json written before these fields existed (format 1 as first released) reads with
    // the defaults, which are what such a wiki was built with.
    const legacy = join(root, "legacy");
    await mkdir(legacy);
    await writeFile(
      join(legacy, "wiki.json"),
      JSON.stringify({
        format: 1,
        created: "2026-11-29T00:00:00.000Z",
        thresholds: {
          min_text_chars: 80,
          max_tags: 12,
          exec_timeout_ms: 10000,
          exec_memory_bytes: 536870912,
          shortlist_k: 20,
          select_max: 5,
          bm25_k1: 1.2,
          bm25_b: 0.75,
        },
        skill_id_encoding: "sha1(…)",
      }),
    );
    expect((await readWikiManifest(legacy)).thresholds).toEqual(defaultThresholds);
    // The shipped example wiki records them all.
    const example = JSON.parse(
      await readFile(join(packageRoot(), "examples", "wiki", "wiki.json"), "utf8"),
    ) as { thresholds: Record<string, unknown> };
    expect(example.thresholds).toEqual(defaultThresholds);
  });

  it("keeps the largest possible card within card_max_tokens (4 characters a token)", () => {
    const largest: SkillMeta = {
      ...meta(0),
      skill_name: "n".repeat(120),
      category_path: ["a".repeat(64), "b".repeat(64), "c".repeat(64)],
      tags: Array.from({ length: defaultThresholds.max_tags }, (_, index) =>
        `${index}`.padEnd(48, "t"),
      ),
      applicability: "x".repeat(5_000),
      modalities_present: ["text", "visual", "code"],
    };
    const card = renderCards([{ card: cardOf(largest), score: 1 }]);
    expect(card.length / 4).toBeLessThanOrEqual(defaultThresholds.card_max_tokens);
  });
});
