/**
 * `--selection public-code` computes BM25's statistics the way the public Resource2Skill code's
 * `bm25.py` does: over the entries it searches (verified ones unless unverified are included),
 * entries without a token left out. The expected ranking comes from that algorithm written out
 * here, not from the project's index; the default (statistics over every entry) is shown to
 * differ on the same wiki, so the test can tell the two apart.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SkillMeta } from "../src/wiki/meta.js";
import { loadOrCreateWikiManifest } from "../src/wiki/store.js";
import { runInProcess } from "./support/cli.js";
import { generatedMeta } from "./support/wiki-cards.js";

let wiki: string;

/** Twelve verified entries, eighteen unverified ones full of "grid", one verified without a token. */
function metas(): SkillMeta[] {
  const names = ["Center a box", "Grid gallery", "Flex row", "Layout helper"];
  return Array.from({ length: 31 }, (_, index) => {
    const verified = index < 12 || index === 30;
    const visual = index % 4 === 0;
    const wordless = index === 30;
    const base = generatedMeta(index, { domains: ["web"] });
    return {
      ...base,
      skill_name: wordless ? "—" : `${names[index % names.length]} ${index}`,
      category_path: ["layout"],
      tags: wordless
        ? ["—"]
        : verified
          ? ["css", index % 3 === 0 ? "grid" : "box"]
          : ["grid", "grid"],
      applicability: wordless
        ? "…"
        : verified
          ? `When a layout needs ${index % 2 === 0 ? "centering in a grid" : "a centered box"}.`
          : "When a grid grid layout is wanted.",
      modalities_present: visual ? ["text", "visual"] : ["text"],
      files: { text: ["text/overview.md"], visual: visual ? ["visual/a.png"] : [], code: [] },
      exec_ok: verified ? "not-applicable" : "unknown",
      validation_status: verified ? "verified" : "unverified",
      validation_note: verified ? null : "no sandbox",
    };
  });
}

/** The reference's pool, written from its description: BM25 over the searched entries only. */
function referencePool(
  entries: readonly SkillMeta[],
  query: string,
  size: number,
  returned: (meta: SkillMeta) => boolean = () => true,
): { id: string; score: number }[] {
  const tokens = (text: string) => text.toLowerCase().match(/[a-z0-9]+/g) ?? [];
  const documents = entries
    .map((entry) => ({
      entry,
      words: tokens([entry.skill_name, entry.applicability, entry.tags.join(" ")].join(" ")),
    }))
    .filter((document) => document.words.length > 0);
  const count = documents.length;
  const average = documents.reduce((sum, document) => sum + document.words.length, 0) / count;
  const frequency = new Map<string, number>();
  for (const document of documents)
    for (const word of new Set(document.words)) frequency.set(word, (frequency.get(word) ?? 0) + 1);
  const terms = [...new Set(tokens(query))];
  const k1 = 1.5;
  const b = 0.75;
  const scored = documents.map(({ entry, words }) => {
    let score = 0;
    for (const term of terms) {
      const tf = words.filter((word) => word === term).length;
      if (tf === 0) continue;
      const df = frequency.get(term) ?? 0;
      const idf = Math.log(1 + (count - df + 0.5) / (df + 0.5));
      score += (idf * (tf * (k1 + 1))) / (tf + k1 * (1 - b + (b * words.length) / average));
    }
    if (score > 0 && entry.modalities_present.includes("visual")) score *= 1.25;
    return { id: entry.skill_id, score };
  });
  // A stable sort of the list in id order (the reference's registry is sorted by skill_id).
  const allowed = new Set(entries.filter(returned).map((entry) => entry.skill_id));
  return scored
    .filter((each) => each.score > 0 && allowed.has(each.id))
    .sort((left, right) => right.score - left.score || (left.id < right.id ? -1 : 1))
    .slice(0, size);
}

beforeAll(async () => {
  wiki = await mkdtemp(join(tmpdir(), "skillsmith-idf-scope-"));
  await loadOrCreateWikiManifest(wiki);
  for (const meta of metas()) {
    await mkdir(join(wiki, meta.domain, meta.skill_id), { recursive: true });
    await writeFile(join(wiki, meta.domain, meta.skill_id, "meta.json"), JSON.stringify(meta));
  }
});
afterAll(async () => {
  await rm(wiki, { recursive: true, force: true });
});

async function shortlist(extra: string[]) {
  const result = await runInProcess([
    "wiki",
    "search",
    "grid centered box",
    "--wiki",
    wiki,
    "--json",
    ...extra,
  ]);
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as {
    shortlist: { card: { skill_id: string }; score: number }[];
    shortlist_config: { idf_over: string; bm25_k1: number };
  };
}

describe("--selection public-code: BM25 statistics over the searched entries", () => {
  it("ranks and scores as the reference's algorithm over the verified entries", async () => {
    const verified = metas().filter((meta) => meta.validation_status === "verified");
    const expected = referencePool(verified, "grid centered box", 25);
    const result = await shortlist(["--selection", "public-code"]);
    expect(result.shortlist_config.idf_over).toBe("searched");
    expect(result.shortlist.map((hit) => hit.card.skill_id)).toEqual(
      expected.map((each) => each.id),
    );
    for (const [index, hit] of result.shortlist.entries())
      expect(hit.score).toBeCloseTo(expected[index]?.score ?? Number.NaN, 12);
  });

  it("covers unverified entries too when they are searched", async () => {
    const expected = referencePool(metas(), "grid centered box", 25);
    const result = await shortlist(["--selection", "public-code", "--include-unverified"]);
    expect(result.shortlist.map((hit) => hit.score)).toHaveLength(expected.length);
    for (const [index, hit] of result.shortlist.entries())
      expect(hit.score).toBeCloseTo(expected[index]?.score ?? Number.NaN, 12);
  });

  it("is told apart by this wiki: statistics over every entry would rank otherwise", () => {
    const verified = metas().filter((meta) => meta.validation_status === "verified");
    const searched = referencePool(verified, "grid centered box", 25);
    const overAll = referencePool(
      metas(),
      "grid centered box",
      25,
      (meta) => meta.validation_status === "verified",
    );
    expect(overAll.map((each) => [each.id, each.score])).not.toEqual(
      searched.map((each) => [each.id, each.score]),
    );
    expect(overAll[0]?.score).not.toBeCloseTo(searched[0]?.score ?? 0, 6);
  });
});
