/**
 * Retrieval of related pool entries for a target task, over target-visible fields only: BM25 by
 * default; embedding similarity is a declared capability that no backend implements yet.
 */
import { UnsupportedError } from "../core/errors.js";
import type { VisibleTask } from "./family.js";
import type { PoolEntry } from "./pool.js";

export const defaultTopK = 3;

export interface RetrievalHit {
  readonly taskId: string;
  readonly score: number;
}

/** What was retrieved and how: recorded in every run log entry. */
export interface RetrievalRecord {
  readonly method: "bm25" | "embedding";
  readonly k: number;
  readonly hits: readonly RetrievalHit[];
}

export interface RetrievalOptions {
  readonly k?: number;
  /** An embedding model spec; when set, similarity search is requested (not supported yet). */
  readonly embeddingModel?: string;
  /** BM25 parameters. */
  readonly k1?: number;
  readonly b?: number;
}

/** Fail before any model call when the options ask for a retrieval method that is missing. */
export function assertRetrievalSupported(options: RetrievalOptions = {}): void {
  if (options.embeddingModel !== undefined)
    throw new UnsupportedError(
      "synth.retrieval.embedding-unsupported",
      `embedding retrieval (${options.embeddingModel}) is not implemented yet; omit the embedding model to use BM25`,
    );
}

/** Lowercased word tokens; identifiers split at underscores so `run_length` matches "run length". */
export function tokenize(text: string): string[] {
  return text.toLowerCase().match(/[a-z0-9]+/g) ?? [];
}

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
  options: RetrievalOptions = {},
): { record: RetrievalRecord; entries: PoolEntry[] } {
  const k = options.k ?? defaultTopK;
  assertRetrievalSupported(options);
  const candidates = pool.filter((entry) => entry.taskId !== target.id);
  const documents = candidates.map((entry) => tokenize(visibleText(entry.visible)));
  const k1 = options.k1 ?? 1.2;
  const b = options.b ?? 0.75;
  const averageLength =
    documents.reduce((sum, document) => sum + document.length, 0) / Math.max(documents.length, 1);
  const documentFrequency = new Map<string, number>();
  for (const document of documents)
    for (const term of new Set(document))
      documentFrequency.set(term, (documentFrequency.get(term) ?? 0) + 1);
  const queryTerms = [...new Set(tokenize(visibleText(target.fields)))];
  const count = documents.length;
  const scored = documents.map((document, index) => {
    const frequencies = new Map<string, number>();
    for (const term of document) frequencies.set(term, (frequencies.get(term) ?? 0) + 1);
    let score = 0;
    for (const term of queryTerms) {
      const frequency = frequencies.get(term) ?? 0;
      if (frequency === 0) continue;
      const containing = documentFrequency.get(term) ?? 0;
      const idf = Math.log(1 + (count - containing + 0.5) / (containing + 0.5));
      score +=
        (idf * frequency * (k1 + 1)) /
        (frequency + k1 * (1 - b + (b * document.length) / Math.max(averageLength, 1)));
    }
    return { index, score };
  });
  // Ties broken by task id so the choice is reproducible whatever order the pool was written in.
  scored.sort(
    (left, right) =>
      right.score - left.score ||
      (candidates[left.index]?.taskId ?? "").localeCompare(candidates[right.index]?.taskId ?? ""),
  );
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
