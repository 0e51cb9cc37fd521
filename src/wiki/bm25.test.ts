import { describe, expect, it } from "vitest";
import { Bm25Index, tokenize } from "../core/bm25.js";
import { mulberry32 } from "./cards.js";

/**
 * A plain BM25 written independently of the index: scan every document, count terms, sum.
 * Same parameters and the same formula as documented in bm25.ts.
 */
function plainBm25(
  documents: string[],
  query: string,
  k: number,
  k1: number,
  b: number,
): { doc: number; score: number }[] {
  const split = (text: string) =>
    text
      .normalize("NFKC")
      .toLowerCase()
      .split(/[^\p{L}\p{N}]+/u)
      .filter(Boolean);
  const docs = documents.map(split);
  const n = docs.length;
  const avgdl = docs.reduce((sum, tokens) => sum + tokens.length, 0) / n;
  const queryTerms: string[] = [];
  for (const term of split(query)) if (!queryTerms.includes(term)) queryTerms.push(term);
  const results: { doc: number; score: number }[] = [];
  for (let doc = 0; doc < n; doc++) {
    const tokens = docs[doc] ?? [];
    let score = 0;
    for (const term of queryTerms) {
      const df = docs.filter((other) => other.includes(term)).length;
      const tf = tokens.filter((token) => token === term).length;
      if (tf === 0) continue;
      const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
      score += idf * ((tf * (k1 + 1)) / (tf + k1 * (1 - b + b * (tokens.length / avgdl))));
    }
    if (score > 0) results.push({ doc, score });
  }
  return results
    .sort((left, right) => right.score - left.score || left.doc - right.doc)
    .slice(0, k);
}

/** Seeded text generator (mulberry32) so the corpus is the same every run. */
function corpus(count: number, seed: number): string[] {
  const random = mulberry32(seed);
  const words = Array.from({ length: 60 }, (_, index) => `w${index}`);
  return Array.from({ length: count }, () => {
    const length = 3 + Math.floor(random() * 12);
    // Squaring skews towards the first words, so some terms are common and some rare.
    return Array.from({ length }, () => words[Math.floor(random() ** 2 * words.length)]).join(" ");
  });
}

describe("Bm25Index", () => {
  it("tokenises into lowercase letter-and-digit runs", () => {
    expect(tokenize("CSS-Grid: place_items, Ünïcode 42!")).toEqual([
      "css",
      "grid",
      "place",
      "items",
      "ünïcode",
      "42",
    ]);
  });

  it("ranks a hand-computed two-document example", () => {
    // N = 2, avgdl = 2; "grid" in doc 0 only: idf = ln(1 + 1.5 / 1.5) = ln 2; norm = 1.2 for both.
    const index = Bm25Index.build(["css grid", "flex box"], { k1: 1.2, b: 0.75 });
    const [best, ...rest] = index.search("grid", 5);
    expect(best?.doc).toBe(0);
    expect(best?.score).toBeCloseTo(Math.log(2) * (2.2 / 2.2), 12);
    expect(rest).toEqual([]);
  });

  it("returns the same top 20 as a plain BM25 on a seeded corpus", () => {
    const documents = corpus(400, 7);
    const index = Bm25Index.build(documents, { k1: 1.2, b: 0.75 });
    for (const query of ["w1 w7", "w0", "w59 w58 w3", "w12 w12 w40", "nothing here", "W5 w33"]) {
      const expected = plainBm25(documents, query, 20, 1.2, 0.75);
      const actual = index.search(query, 20);
      expect(actual.map((hit) => hit.doc)).toEqual(expected.map((hit) => hit.doc));
      for (const [position, hit] of actual.entries())
        expect(hit.score).toBeCloseTo(expected[position]?.score ?? Number.NaN, 9);
    }
  });

  it("filters by the allowed mask before ranking and reuses its buffers between queries", () => {
    const documents = corpus(200, 3);
    const index = Bm25Index.build(documents, { k1: 1.2, b: 0.75 });
    const allowed = new Uint8Array(200).map((_, doc) => (doc % 2 === 0 ? 1 : 0));
    const filtered = index.search("w2 w9", 10, allowed);
    expect(filtered.length).toBeGreaterThan(0);
    for (const hit of filtered) expect(hit.doc % 2).toBe(0);
    const expectedEven = plainBm25(documents, "w2 w9", 200, 1.2, 0.75)
      .filter((hit) => hit.doc % 2 === 0)
      .slice(0, 10);
    expect(filtered.map((hit) => hit.doc)).toEqual(expectedEven.map((hit) => hit.doc));
    // A second, unfiltered query is not polluted by the first one's accumulator.
    expect(index.search("w2 w9", 10).map((hit) => hit.doc)).toEqual(
      plainBm25(documents, "w2 w9", 10, 1.2, 0.75).map((hit) => hit.doc),
    );
  });
});

describe("tokenize across scripts", () => {
  it("splits where an unspaced script meets Latin or digits, and keeps each script's run whole", () => {
    expect(tokenize("使用CSS网格 grid2列")).toEqual(["使用", "css", "网格", "grid2", "列"]);
    expect(tokenize("東京タワーとJavaScript")).toEqual(["東京タワーと", "javascript"]);
    expect(tokenize("한국어API문서")).toEqual(["한국어", "api", "문서"]);
    expect(tokenize("Größe_der Datei")).toEqual(["größe", "der", "datei"]);
  });
});
