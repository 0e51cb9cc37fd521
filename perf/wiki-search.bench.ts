/**
 * Stage-1 search at ecosystem scale: our BM25 index against MiniSearch (an established
 * JavaScript search library) on the same synthetic skill cards and the same queries, at 10k,
 * 100k and 1M cards. Reports build time, memory (heap + array buffers after a forced GC),
 * query latency p50 / p99 of top-20 queries, and whether our top 20 equals a plain reference
 * BM25 with the same parameters (k1 = 1.2, b = 0.75).
 *
 * SKILLSMITH_BENCH_WIKI_SIZES=10000,100000 limits the sizes (default 10000,100000,1000000).
 */

import { fileURLToPath } from "node:url";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import MiniSearch from "minisearch";
import { Bm25Index } from "../src/core/bm25.js";
import { runProcess } from "../src/core/process.js";
import type { Benchmark, BenchmarkRow } from "./harness.js";

const K1 = 1.2;
const B = 0.75;
const TOP = 20;
const QUERIES = 200;
const VOCABULARY = 40_000;

setFlagsFromString("--expose-gc");
const collect = runInNewContext("gc") as () => void;

/** Live bytes after a full collection: the JavaScript heap plus memory outside it (typed arrays). */
function memory(): number {
  collect();
  collect();
  const usage = process.memoryUsage();
  return usage.heapUsed + usage.external;
}

function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Pronounceable pseudo-words; a skewed draw makes a few words common and most rare (Zipf-like). */
function vocabulary(): string[] {
  const random = seeded(1);
  const syllables = [
    "ka",
    "lo",
    "mi",
    "ne",
    "ru",
    "sa",
    "ti",
    "vo",
    "xe",
    "zu",
    "ba",
    "de",
    "fi",
    "go",
    "hu",
    "ja",
  ];
  const words = new Set<string>();
  while (words.size < VOCABULARY) {
    let word = "";
    const length = 2 + Math.floor(random() * 3);
    for (let index = 0; index < length; index += 1)
      word += syllables[Math.floor(random() * syllables.length)];
    words.add(word);
  }
  return [...words];
}

function generator(words: readonly string[], seed: number): (count: number) => string {
  const random = seeded(seed);
  return (count) => {
    const picked: string[] = [];
    for (let index = 0; index < count; index += 1)
      picked.push(words[Math.floor(random() ** 3 * words.length)] as string);
    return picked.join(" ");
  };
}

/** A card's indexed text: name ⊕ tags ⊕ applicability ⊕ category path, as the wiki indexes it. */
function cards(count: number, words: readonly string[]): string[] {
  const draw = generator(words, 2);
  const random = seeded(3);
  const result: string[] = new Array(count);
  for (let index = 0; index < count; index += 1) {
    // join() gives a flat string; a template literal would leave a rope that tokenising later
    // flattens, which shows up as memory "freed" by the index build.
    result[index] = [
      draw(2 + Math.floor(random() * 3)),
      draw(4),
      draw(8 + Math.floor(random() * 10)),
      draw(2),
    ].join("\n");
  }
  return result;
}

function queries(words: readonly string[]): string[] {
  const draw = generator(words, 4);
  const random = seeded(5);
  return Array.from({ length: QUERIES }, () => draw(2 + Math.floor(random() * 4)));
}

/** Plain BM25 written out in full, streaming over the corpus (no index). */
function referenceTop(documents: readonly string[], query: string): number[] {
  const split = (text: string) =>
    text
      .normalize("NFKC")
      .toLowerCase()
      .split(/[^\p{L}\p{N}]+/u)
      .filter((token) => token !== "");
  const terms = [...new Set(split(query))];
  const frequency = new Map<string, number>(terms.map((term) => [term, 0]));
  let lengthSum = 0;
  for (const document of documents) {
    const tokens = split(document);
    lengthSum += tokens.length;
    for (const term of new Set(tokens))
      if (frequency.has(term)) frequency.set(term, (frequency.get(term) ?? 0) + 1);
  }
  const n = documents.length;
  const average = lengthSum / n;
  const scored: { doc: number; score: number }[] = [];
  documents.forEach((document, doc) => {
    const tokens = split(document);
    let score = 0;
    for (const term of terms) {
      const tf = tokens.filter((token) => token === term).length;
      if (tf === 0) continue;
      const df = frequency.get(term) ?? 0;
      const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
      score += idf * ((tf * (K1 + 1)) / (tf + K1 * (1 - B + B * (tokens.length / average))));
    }
    if (score > 0) scored.push({ doc, score });
  });
  scored.sort((left, right) => right.score - left.score || left.doc - right.doc);
  return scored.slice(0, TOP).map((hit) => hit.doc);
}

function percentile(sorted: readonly number[], share: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil(share * sorted.length) - 1)] ?? Number.NaN;
}

/**
 * Per-query latency: each query runs three times and its fastest run counts, so a scheduler
 * hiccup on the shared machine or a GC pause does not pose as the cost of a query; p50 and p99
 * are then taken over the queries.
 */
function latencies(
  run: (query: string) => unknown,
  list: readonly string[],
): { p50: number; p99: number } {
  for (const query of list) run(query);
  const samples = list.map((query) => {
    let best = Number.POSITIVE_INFINITY;
    for (let repeat = 0; repeat < 3; repeat += 1) {
      const start = performance.now();
      run(query);
      best = Math.min(best, performance.now() - start);
    }
    return best;
  });
  samples.sort((left, right) => left - right);
  return { p50: percentile(samples, 0.5), p99: percentile(samples, 0.99) };
}

const megabytes = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MB`;
const label = (size: number) => (size >= 1_000_000 ? `${size / 1_000_000}M` : `${size / 1_000}k`);

interface WorkerResult {
  readonly buildMs: number;
  readonly memoryBytes: number;
  readonly arrayBytes?: number;
  readonly p50: number;
  readonly p99: number;
  readonly equal?: number;
  readonly checked?: number;
}

/** One library at one size, measured inside a fresh process (see `measureInProcess`). */
function measureHere(size: number, library: "ours" | "minisearch"): WorkerResult {
  const words = vocabulary();
  const queryList = queries(words);
  const corpus = cards(size, words);
  const before = memory();
  const start = performance.now();
  if (library === "ours") {
    const index = Bm25Index.build(corpus, { k1: K1, b: B });
    const buildMs = performance.now() - start;
    const memoryBytes = memory() - before;
    const latency = latencies((query) => index.search(query, TOP), queryList);
    // Equality with the plain reference: 50 queries at 10k, fewer at larger sizes (the
    // reference scans the whole corpus per query).
    const checked = size <= 10_000 ? 50 : size <= 100_000 ? 10 : 3;
    let equal = 0;
    for (const query of queryList.slice(0, checked)) {
      const fast = index.search(query, TOP).map((hit) => hit.doc);
      if (JSON.stringify(fast) === JSON.stringify(referenceTop(corpus, query))) equal += 1;
    }
    return { buildMs, memoryBytes, arrayBytes: index.arrayBytes(), ...latency, equal, checked };
  }
  // MiniSearch: OR queries, BM25 ranking, no prefix or fuzzy matching, exact terms only.
  const mini = new MiniSearch<{ id: number; text: string }>({
    fields: ["text"],
    idField: "id",
    searchOptions: { prefix: false, fuzzy: false, combineWith: "OR" },
  });
  mini.addAll(corpus.map((text, id) => ({ id, text })));
  const buildMs = performance.now() - start;
  const memoryBytes = memory() - before;
  const latency = latencies((query) => mini.search(query).slice(0, TOP), queryList);
  return { buildMs, memoryBytes, ...latency };
}

const WORKER_VARIABLE = "SKILLSMITH_WIKI_BENCH_WORKER";

/**
 * Each (library, size) runs in its own Node process: one measurement's garbage, heap growth and
 * JIT state cannot tax the next, and the memory figure is that process's own.
 */
async function measureInProcess(
  size: number,
  library: "ours" | "minisearch",
): Promise<WorkerResult> {
  const result = await runProcess(
    process.execPath,
    ["--import", "tsx", fileURLToPath(import.meta.url)],
    {
      env: { ...process.env, [WORKER_VARIABLE]: `${library}:${size}` },
      timeoutMs: 15 * 60_000,
    },
  );
  const line = result.stdout.trim().split("\n").at(-1) ?? "";
  if (result.exitCode !== 0 || !line.startsWith("{"))
    throw new Error(
      `wiki-search worker ${library}:${size} failed (exit ${String(result.exitCode)}): ${result.stderr.slice(-2_000)}`,
    );
  return JSON.parse(line) as WorkerResult;
}

const worker = process.env[WORKER_VARIABLE];
if (worker !== undefined) {
  const [library, size] = worker.split(":");
  process.stdout.write(
    `${JSON.stringify(measureHere(Number(size), library === "minisearch" ? "minisearch" : "ours"))}\n`,
  );
}

const benchmark: Benchmark = {
  name: "wiki-search",
  async run(): Promise<BenchmarkRow[]> {
    const sizes = (process.env.SKILLSMITH_BENCH_WIKI_SIZES ?? "10000,100000,1000000")
      .split(",")
      .map(Number);
    const rows: BenchmarkRow[] = [];
    for (const size of sizes) {
      const ours = await measureInProcess(size, "ours");
      const miniSkipped = size > 100_000 && process.env.SKILLSMITH_BENCH_MINISEARCH_1M !== "1";
      const mini = miniSkipped ? undefined : await measureInProcess(size, "minisearch");
      const versus = (mine: number, theirs: number | undefined) =>
        theirs === undefined ? {} : { baselineMs: theirs, ratio: theirs / mine };
      rows.push({
        case: `build ${label(size)} cards`,
        medianMs: ours.buildMs,
        ...versus(ours.buildMs, mini?.buildMs),
        note: `memory ours ${megabytes(ours.memoryBytes)} (typed arrays ${megabytes(ours.arrayBytes ?? 0)}); ${
          mini === undefined
            ? "MiniSearch not run at this size (SKILLSMITH_BENCH_MINISEARCH_1M=1 runs it: minutes per query batch and GBs of heap)"
            : `MiniSearch ${megabytes(mini.memoryBytes)}`
        }`,
      });
      rows.push({
        case: `query p50 ${label(size)} cards (top ${TOP}, ${QUERIES} queries)`,
        medianMs: ours.p50,
        ...versus(ours.p50, mini?.p50),
      });
      rows.push({
        case: `query p99 ${label(size)} cards`,
        medianMs: ours.p99,
        ...versus(ours.p99, mini?.p99),
        ...(size >= 1_000_000 ? { target: "< 20 ms", met: ours.p99 < 20 } : {}),
        note: `top-20 equal to plain BM25 on ${ours.equal ?? 0}/${ours.checked ?? 0} queries`,
      });
    }
    return rows;
  },
};
export default benchmark;
