/**
 * A BM25 index built for millions of short skill cards: terms are interned to integer ids,
 * postings live in flat typed arrays (compressed sparse rows, documents in ascending order),
 * and a query scores only the documents in its terms' posting lists, into a reused
 * accumulator, then keeps the top k in a small heap.
 *
 * Scoring (Robertson/Spärck Jones with the non-negative "+1" idf used by Lucene):
 *   idf(t)        = ln(1 + (N − df(t) + 0.5) / (df(t) + 0.5))
 *   norm(d)       = k1 · (1 − b + b · |d| / avgdl)
 *   score(d, q)   = Σ over distinct query terms t, in query order: idf(t) · (tf · (k1 + 1)) / (tf + norm(d))
 * Ties are broken by the lower document number, so rankings are total and reproducible.
 *
 * The one BM25 of the project: the wiki's search (stage 1, the persisted index, online query
 * ranking) and synthesis retrieval (`synth/retrieval.ts`) both use it, with `tokenize`.
 */

export interface Bm25Parameters {
  readonly k1: number;
  readonly b: number;
}

export interface ScoredDocument {
  readonly doc: number;
  readonly score: number;
}

const TOKEN_SPLIT = /[^\p{L}\p{N}]+/u;
const ASCII_TOKEN_SPLIT = /[^a-z0-9]+/;
const NON_ASCII = /\P{ASCII}/u;

/** Scripts written without spaces between words (Han, kana, Hangul). */
const UNSPACED = String.raw`\p{Script_Extensions=Han}\p{Script_Extensions=Hiragana}\p{Script_Extensions=Katakana}\p{Script_Extensions=Hangul}`;
/** A boundary between an unspaced script and anything else (`使用css网格` → 使用 | css | 网格). */
const SCRIPT_BOUNDARY = new RegExp(
  `(?<=[${UNSPACED}])(?=[^${UNSPACED}])|(?<=[^${UNSPACED}])(?=[${UNSPACED}])`,
  "u",
);

/**
 * Lowercase (NFKC) runs of letters and digits; a run that mixes an unspaced script (Chinese,
 * Japanese, Korean) with Latin letters or digits is split where the script changes, so
 * "用grid布局" matches "grid". Runs of one unspaced script stay whole (no word segmentation).
 */
export function tokenize(text: string): string[] {
  // ASCII text is its own NFKC form and its only letters and digits are [a-z0-9] once
  // lowercased, so the cheaper split gives the same tokens (a measurable share of build time).
  if (!NON_ASCII.test(text))
    return text
      .toLowerCase()
      .split(ASCII_TOKEN_SPLIT)
      .filter((token) => token !== "");
  const tokens: string[] = [];
  for (const run of text.normalize("NFKC").toLowerCase().split(TOKEN_SPLIT)) {
    if (run === "") continue;
    if (NON_ASCII.test(run)) tokens.push(...run.split(SCRIPT_BOUNDARY));
    else tokens.push(run);
  }
  return tokens;
}

/** Distinct tokens in order of first appearance. */
export function distinctTokens(text: string): string[] {
  return [...new Set(tokenize(text))];
}

export function bm25Contribution(idf: number, tf: number, norm: number, k1: number): number {
  return idf * ((tf * (k1 + 1)) / (tf + norm));
}

export function bm25Idf(documentCount: number, documentFrequency: number): number {
  return Math.log(1 + (documentCount - documentFrequency + 0.5) / (documentFrequency + 0.5));
}

export function bm25Norm(
  length: number,
  averageLength: number,
  parameters: Bm25Parameters,
): number {
  return (
    parameters.k1 *
    (1 - parameters.b + parameters.b * (averageLength === 0 ? 0 : length / averageLength))
  );
}

/** Does (score, doc) rank before (otherScore, otherDoc)? */
function before(score: number, doc: number, otherScore: number, otherDoc: number): boolean {
  return score > otherScore || (score === otherScore && doc < otherDoc);
}

/**
 * The idf-free part of one posting's contribution, (tf · (k1 + 1)) / (tf + norm(d)): one
 * expression for the in-memory index and the index file, so their scores are bit-identical.
 */
export function bm25Impact(tf: number, norm: number, k1Plus1: number): number {
  return (tf * k1Plus1) / (tf + norm);
}

/**
 * A corpus as an index is made from it: terms interned to ids (in order of first appearance),
 * postings grouped by term (documents ascending) with their term frequencies, and the length
 * (tokens) of every document. The in-memory index and the wiki's index file both start here.
 */
export interface Bm25Postings {
  readonly terms: Map<string, number>;
  /** Per term id, where its postings start; `offsets[id + 1]` ends them. */
  readonly offsets: Int32Array;
  readonly postingDocs: Int32Array;
  readonly postingFrequencies: Uint16Array;
  readonly lengths: Int32Array;
}

/** Collects documents one at a time (so a caller need not hold every text at once). */
export class Bm25PostingsBuilder {
  private readonly terms = new Map<string, number>();
  private starts = new Int32Array(1024);
  private tokenIds = new Int32Array(8192);
  private used = 0;
  private count = 0;

  /** Add the next document; returns its number. */
  add(text: string): number {
    if (this.count + 1 >= this.starts.length) this.starts = grow(this.starts);
    this.starts[this.count] = this.used;
    for (const token of tokenize(text)) {
      let id = this.terms.get(token);
      if (id === undefined) {
        id = this.terms.size;
        this.terms.set(token, id);
      }
      if (this.used === this.tokenIds.length) this.tokenIds = grow(this.tokenIds);
      this.tokenIds[this.used] = id;
      this.used += 1;
    }
    this.count += 1;
    this.starts[this.count] = this.used;
    return this.count - 1;
  }

  finish(): Bm25Postings {
    const { terms, starts, tokenIds, count } = this;
    const termCount = terms.size;
    // Document frequency: a term counts once per document (lastDoc marks where it was seen).
    const frequency = new Int32Array(termCount);
    const lastDoc = new Int32Array(termCount).fill(-1);
    for (let doc = 0; doc < count; doc += 1) {
      for (let position = starts[doc] ?? 0; position < (starts[doc + 1] ?? 0); position += 1) {
        const id = tokenIds[position] ?? 0;
        if (lastDoc[id] !== doc) {
          lastDoc[id] = doc;
          frequency[id] = (frequency[id] ?? 0) + 1;
        }
      }
    }
    const offsets = new Int32Array(termCount + 1);
    for (let id = 0; id < termCount; id += 1)
      offsets[id + 1] = (offsets[id] ?? 0) + (frequency[id] ?? 0);
    const total = offsets[termCount] ?? 0;
    const postingDocs = new Int32Array(total);
    const postingFrequencies = new Uint16Array(total);
    const cursor = offsets.slice(0, termCount);
    const slot = new Int32Array(termCount);
    const lengths = new Int32Array(count);
    lastDoc.fill(-1);
    for (let doc = 0; doc < count; doc += 1) {
      const start = starts[doc] ?? 0;
      const end = starts[doc + 1] ?? 0;
      lengths[doc] = end - start;
      for (let position = start; position < end; position += 1) {
        const id = tokenIds[position] ?? 0;
        if (lastDoc[id] !== doc) {
          lastDoc[id] = doc;
          const at = cursor[id] ?? 0;
          cursor[id] = at + 1;
          slot[id] = at;
          postingDocs[at] = doc;
          postingFrequencies[at] = 1;
        } else {
          const at = slot[id] ?? 0;
          // Saturate rather than wrap: a term repeated 65 535 times in one card is not a real card.
          if ((postingFrequencies[at] ?? 0) < 65_535)
            postingFrequencies[at] = (postingFrequencies[at] ?? 0) + 1;
        }
      }
    }
    return { terms, offsets, postingDocs, postingFrequencies, lengths };
  }
}

function grow(array: Int32Array<ArrayBuffer>): Int32Array<ArrayBuffer> {
  const grown = new Int32Array(array.length * 2);
  grown.set(array);
  return grown;
}

/** Postings of a whole corpus at once. */
export function buildPostings(documents: readonly string[]): Bm25Postings {
  const builder = new Bm25PostingsBuilder();
  for (const document of documents) builder.add(document);
  return builder.finish();
}

/** The average document length the norms use (0 for an empty corpus). */
export function averageLength(lengths: ArrayLike<number>, count = lengths.length): number {
  let sum = 0;
  for (let doc = 0; doc < lengths.length; doc += 1) sum += lengths[doc] ?? 0;
  return count === 0 ? 0 : sum / count;
}

/**
 * Score accumulation and top-k selection shared by every index: `add` a posting's contribution
 * (documents first touched are remembered), then `top` drains the accumulator (leaving it zero
 * for the next query) into the best k, best first, ties to the lower document number.
 */
export class ScoreAccumulator {
  private readonly scores: Float64Array;
  private readonly touched: Int32Array;
  private touchedCount = 0;

  constructor(documentCount: number) {
    this.scores = new Float64Array(documentCount);
    this.touched = new Int32Array(documentCount);
  }

  get byteLength(): number {
    return this.scores.byteLength + this.touched.byteLength;
  }

  /** Every contribution is positive (idf > 0, tf ≥ 1), so a zero score marks an untouched document. */
  add(doc: number, contribution: number): void {
    const previous = this.scores[doc]!;
    if (previous === 0) {
      this.touched[this.touchedCount] = doc;
      this.touchedCount += 1;
    }
    this.scores[doc] = previous + contribution;
  }

  top(k: number): ScoredDocument[] {
    const { scores, touched } = this;
    const touchedCount = this.touchedCount;
    this.touchedCount = 0;
    // A binary min-heap of the best k so far: the root is the worst kept document.
    const heapDocs = new Int32Array(k);
    const heapScores = new Float64Array(k);
    let heapSize = 0;
    const worse = (left: number, right: number) =>
      before(
        heapScores[right] ?? 0,
        heapDocs[right] ?? 0,
        heapScores[left] ?? 0,
        heapDocs[left] ?? 0,
      );
    const swap = (left: number, right: number) => {
      const doc = heapDocs[left] ?? 0;
      const score = heapScores[left] ?? 0;
      heapDocs[left] = heapDocs[right] ?? 0;
      heapScores[left] = heapScores[right] ?? 0;
      heapDocs[right] = doc;
      heapScores[right] = score;
    };
    const siftDown = (from: number) => {
      let index = from;
      for (;;) {
        const left = 2 * index + 1;
        const right = left + 1;
        let smallest = index;
        if (left < heapSize && worse(left, smallest)) smallest = left;
        if (right < heapSize && worse(right, smallest)) smallest = right;
        if (smallest === index) return;
        swap(index, smallest);
        index = smallest;
      }
    };
    for (let position = 0; position < touchedCount; position += 1) {
      const doc = touched[position]!;
      const score = scores[doc]!;
      scores[doc] = 0;
      if (k === 0 || score <= 0) continue;
      if (heapSize < k) {
        heapDocs[heapSize] = doc;
        heapScores[heapSize] = score;
        heapSize += 1;
        let index = heapSize - 1;
        while (index > 0) {
          const parent = (index - 1) >> 1;
          if (!worse(index, parent)) break;
          swap(index, parent);
          index = parent;
        }
      } else if (before(score, doc, heapScores[0] ?? 0, heapDocs[0] ?? 0)) {
        heapDocs[0] = doc;
        heapScores[0] = score;
        siftDown(0);
      }
    }
    const results: ScoredDocument[] = [];
    for (let index = 0; index < heapSize; index += 1)
      results.push({ doc: heapDocs[index] ?? 0, score: heapScores[index] ?? 0 });
    return results.sort((left, right) =>
      before(left.score, left.doc, right.score, right.doc) ? -1 : 1,
    );
  }
}

export class Bm25Index {
  private constructor(
    readonly parameters: Bm25Parameters,
    private readonly terms: Map<string, number>,
    private readonly offsets: Int32Array,
    private readonly postingDocs: Int32Array,
    /** Per posting: (tf · (k1 + 1)) / (tf + norm(d)), the contribution without its idf. */
    private readonly impacts: Float64Array,
    private readonly accumulator: ScoreAccumulator,
    private readonly documentCount: number,
  ) {}

  get size(): number {
    return this.documentCount;
  }

  /** Build from the documents' texts; document numbers are their positions. */
  static build(documents: readonly string[], parameters: Bm25Parameters): Bm25Index {
    return Bm25Index.fromPostings(buildPostings(documents), parameters);
  }

  static fromPostings(postings: Bm25Postings, parameters: Bm25Parameters): Bm25Index {
    const { terms, offsets, postingDocs, postingFrequencies, lengths } = postings;
    const count = lengths.length;
    const average = averageLength(lengths);
    const norms = new Float64Array(count);
    for (let doc = 0; doc < count; doc += 1)
      norms[doc] = bm25Norm(lengths[doc] ?? 0, average, parameters);
    // The idf-free part of every posting's contribution, computed once, so a query only
    // multiplies by idf and adds.
    const k1Plus1 = parameters.k1 + 1;
    const total = postingDocs.length;
    const impacts = new Float64Array(total);
    for (let position = 0; position < total; position += 1)
      impacts[position] = bm25Impact(
        postingFrequencies[position]!,
        norms[postingDocs[position]!]!,
        k1Plus1,
      );
    return new Bm25Index(
      parameters,
      terms,
      offsets,
      postingDocs,
      impacts,
      new ScoreAccumulator(count),
      count,
    );
  }

  /** Bytes held by the typed arrays (the term dictionary is not counted). */
  arrayBytes(): number {
    return (
      this.offsets.byteLength +
      this.postingDocs.byteLength +
      this.impacts.byteLength +
      this.accumulator.byteLength
    );
  }

  /**
   * The top `k` documents for a query, best first; documents with a zero score are never
   * returned. `allowed` (one byte per document, non-zero = eligible) filters before ranking.
   */
  search(query: string, k: number, allowed?: Uint8Array): ScoredDocument[] {
    const docs = this.postingDocs;
    const impacts = this.impacts;
    const accumulator = this.accumulator;
    for (const token of distinctTokens(query)) {
      const id = this.terms.get(token);
      if (id === undefined) continue;
      const start = this.offsets[id]!;
      const end = this.offsets[id + 1]!;
      const idf = bm25Idf(this.documentCount, end - start);
      // The hot loop: typed arrays only; idf · impact is bm25Contribution's expression with its
      // inner quotient precomputed.
      for (let position = start; position < end; position += 1) {
        const doc = docs[position]!;
        if (allowed !== undefined && allowed[doc] === 0) continue;
        accumulator.add(doc, idf * impacts[position]!);
      }
    }
    return accumulator.top(k);
  }
}
