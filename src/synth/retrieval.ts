/**
 * Retrieval of related pool entries for a target task, over target-visible fields only: by
 * embedding similarity when an embedding model is configured, BM25 otherwise. The method used is
 * recorded with every retrieval (`bm25` or `embedding:<model spec>`).
 */

import { Bm25Index, tokenize } from "../core/bm25.js";
import { cosineSimilarity, type EmbeddingClient } from "../model/index.js";
import type { VisibleTask } from "./family.js";
import type { PoolEntry } from "./pool.js";
import { defaultTopK } from "./settings.js";

export { defaultTopK };

export interface RetrievalHit {
  readonly taskId: string;
  readonly score: number;
}

export type RetrievalMethod = "bm25" | `embedding:${string}`;

/** What was retrieved and how: recorded in every run log entry. */
export interface RetrievalRecord {
  readonly method: RetrievalMethod;
  readonly k: number;
  readonly hits: readonly RetrievalHit[];
}

export interface RetrievalOptions {
  readonly k?: number;
  /** An embedding model: retrieval by cosine similarity of embedded visible fields. */
  readonly embedding?: EmbeddingClient;
  /** BM25 parameters. */
  readonly k1?: number;
  readonly b?: number;
}

/** The retrieval method a set of options selects, as recorded in run logs and reports. */
export function retrievalMethodOf(options: RetrievalOptions = {}): RetrievalMethod {
  return options.embedding === undefined ? "bm25" : `embedding:${options.embedding.spec}`;
}

/**
 * Vectors of visible texts, each text embedded once per index: the pool's vectors are computed
 * with the first retrieval and reused by every later one (one index per method run, so each
 * method's cost includes the pool's embedding once). The tokens the embedding calls used are
 * kept for the cost table.
 */
export class EmbeddingIndex {
  private readonly vectors = new Map<string, Promise<number[]>>();
  inputTokens = 0;
  calls = 0;

  constructor(readonly client: EmbeddingClient) {}

  get method(): RetrievalMethod {
    return `embedding:${this.client.spec}`;
  }

  /** Vectors for `texts`, in order; texts not seen before are embedded in one request. */
  async vectorsOf(texts: readonly string[], signal?: AbortSignal): Promise<number[][]> {
    const missing = [...new Set(texts.filter((text) => !this.vectors.has(text)))];
    if (missing.length > 0) {
      const batch = this.client
        .embed(missing, signal === undefined ? {} : { signal })
        .then((result) => {
          this.inputTokens += result.usage.inputTokens;
          this.calls += 1;
          return result.vectors;
        });
      missing.forEach((text, index) => {
        const vector = batch.then((vectors) => vectors[index] ?? []);
        this.vectors.set(text, vector);
        // A failed call must not be cached as the text's vector.
        vector.catch(() => this.vectors.delete(text));
      });
    }
    return Promise.all(texts.map((text) => this.vectors.get(text) ?? Promise.resolve([])));
  }
}

/**
 * The project's one tokenizer (`core/bm25.ts`): lowercase NFKC runs of letters and digits, so
 * identifiers split at underscores (`run_length` matches "run length") and non-Latin text is
 * searchable too.
 */
export { tokenize };

function visibleText(fields: Readonly<Record<string, string>>): string {
  return Object.values(fields).join("\n");
}

/**
 * The top-k pool entries for the target by BM25 over visible fields. Entries for the target's own
 * task id are excluded, so a training task never retrieves its own attempt.
 */
export function retrieve(
  target: VisibleTask,
  pool: readonly PoolEntry[],
  options: Omit<RetrievalOptions, "embedding"> = {},
): { record: RetrievalRecord; entries: PoolEntry[] } {
  const k = options.k ?? defaultTopK;
  // Sorted by task id, so the index's tie-break (the lower document number) is by task id and the
  // choice is reproducible whatever order the pool was written in.
  const candidates = pool
    .filter((entry) => entry.taskId !== target.id)
    .sort((left, right) => (left.taskId < right.taskId ? -1 : left.taskId > right.taskId ? 1 : 0));
  const index = Bm25Index.build(
    candidates.map((entry) => visibleText(entry.visible)),
    { k1: options.k1 ?? 1.2, b: options.b ?? 0.75 },
  );
  const hits = index.search(visibleText(target.fields), k);
  // Fewer than k entries share a term with the target: the rest follow with score 0, by task id.
  const chosen = new Set(hits.map((hit) => hit.doc));
  const scored = [
    ...hits.map((hit) => ({ index: hit.doc, score: hit.score })),
    ...candidates.flatMap((_, position) =>
      chosen.has(position) ? [] : [{ index: position, score: 0 }],
    ),
  ];
  const top = scored.slice(0, k);
  const entries = top.flatMap(({ index }) => {
    const entry = candidates[index];
    return entry === undefined ? [] : [entry];
  });
  return {
    record: {
      method: "bm25",
      k,
      hits: top.map(({ index, score }) => ({
        taskId: candidates[index]?.taskId ?? "",
        score: Math.round(score * 1e6) / 1e6,
      })),
    },
    entries,
  };
}

/**
 * The top-k pool entries for the target by cosine similarity of embedded visible fields (the
 * target's and each entry's `visible`, nothing else). Own task excluded, ties by task id.
 */
export async function retrieveByEmbedding(
  target: VisibleTask,
  pool: readonly PoolEntry[],
  index: EmbeddingIndex,
  options: { readonly k?: number; readonly signal?: AbortSignal } = {},
): Promise<{ record: RetrievalRecord; entries: PoolEntry[] }> {
  const k = options.k ?? defaultTopK;
  const candidates = pool.filter((entry) => entry.taskId !== target.id);
  const texts = candidates.map((entry) => visibleText(entry.visible));
  const [targetVector = [], ...vectors] = await index.vectorsOf(
    [visibleText(target.fields), ...texts],
    options.signal,
  );
  const scored = candidates.map((entry, position) => ({
    entry,
    score: cosineSimilarity(targetVector, vectors[position] ?? []),
  }));
  scored.sort(
    (left, right) =>
      right.score - left.score || left.entry.taskId.localeCompare(right.entry.taskId),
  );
  const top = scored.slice(0, k);
  return {
    record: {
      method: index.method,
      k,
      hits: top.map(({ entry, score }) => ({
        taskId: entry.taskId,
        score: Math.round(score * 1e6) / 1e6,
      })),
    },
    entries: top.map(({ entry }) => entry),
  };
}

/** Retrieval as configured: by embedding when an index is given, BM25 otherwise. */
export function retrieveEntries(
  target: VisibleTask,
  pool: readonly PoolEntry[],
  options: RetrievalOptions,
  index: EmbeddingIndex | undefined,
  signal?: AbortSignal,
): Promise<{ record: RetrievalRecord; entries: PoolEntry[] }> {
  if (index === undefined) return Promise.resolve(retrieve(target, pool, options));
  return retrieveByEmbedding(target, pool, index, {
    ...(options.k === undefined ? {} : { k: options.k }),
    ...(signal === undefined ? {} : { signal }),
  });
}
