/**
 * Embedding similarity for skill search: cards (name ⊕ tags ⊕ applicability ⊕ category path,
 * the same text BM25 indexes) are embedded once per model and cached in the wiki folder, keyed
 * by the SHA-256 of the card text, so a later search embeds only the query and cards that are
 * new or changed. Ranking is by cosine similarity with the query.
 */
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import { unlessMissing, writeFileAtomic } from "../core/fs.js";
// The modules themselves, not the model barrel: search loads no model code it does not use.
import { cosineSimilarity, type EmbeddingClient } from "../model/embedding.js";
import { type EmbeddingModelChoice, resolveEmbeddingModel } from "../model/embedding-config.js";
import { WIKI_EMBEDDINGS_FORMAT, wikiFileSchema } from "./meta.js";

export const EMBEDDING_CACHE_FOLDER = join(".cache", "embeddings");
export { EMBEDDING_MODEL_VARIABLE } from "../model/embedding-config.js";

const cacheFileSchema = wikiFileSchema(WIKI_EMBEDDINGS_FORMAT, {
  model: z.string(),
  /** SHA-256 of the card text → the vector as little-endian float32, base64. */
  vectors: z.record(z.string(), z.string()),
});
type CacheFile = z.infer<typeof cacheFileSchema>;

export function textHash(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

function encodeVector(vector: readonly number[]): string {
  return Buffer.from(Float32Array.from(vector).buffer).toString("base64");
}

function decodeVector(text: string): number[] {
  const bytes = Buffer.from(text, "base64");
  const copy = new Uint8Array(bytes.length);
  copy.set(bytes);
  return Array.from(new Float32Array(copy.buffer, 0, Math.floor(copy.length / 4)));
}

/** The cache file of one model: its spec made safe as a file name, plus a short hash of it. */
export function embeddingCachePath(wiki: string, model: string): string {
  const safe = model.replace(/[^A-Za-z0-9._-]+/g, "_").slice(0, 80);
  return join(wiki, EMBEDDING_CACHE_FOLDER, `${safe}-${textHash(model).slice(0, 8)}.json`);
}

/**
 * Card vectors of one embedding model, loaded from and saved to the wiki's cache (none when the
 * search has no wiki folder). A cache that cannot be read is rebuilt; one that cannot be
 * written (a read-only install) only costs the next search its re-embedding.
 */
export class CardEmbeddings {
  private readonly vectors = new Map<string, number[]>();
  private dirty = false;

  private constructor(
    readonly client: EmbeddingClient,
    private readonly file: string | undefined,
  ) {}

  static async open(client: EmbeddingClient, wiki: string | undefined): Promise<CardEmbeddings> {
    const file = wiki === undefined ? undefined : embeddingCachePath(wiki, client.spec);
    const cache = new CardEmbeddings(client, file);
    if (file !== undefined) {
      // No cache yet: it is built below. A cache that is there but unreadable is an error.
      const text = await unlessMissing(file, readFile(file, "utf8"));
      let value: unknown;
      try {
        value = text === undefined ? undefined : JSON.parse(text);
      } catch {
        // A damaged cache (a crash mid-write of an older version) is rebuilt like a missing one.
      }
      const parsed = cacheFileSchema.safeParse(value);
      if (parsed.success && parsed.data.model === client.spec)
        for (const [hash, vector] of Object.entries(parsed.data.vectors))
          cache.vectors.set(hash, decodeVector(vector));
    }
    return cache;
  }

  /** Vectors of `texts` in order; only texts not cached yet are sent to the model, in one call. */
  async vectorsOf(texts: readonly string[]): Promise<number[][]> {
    const hashes = texts.map(textHash);
    const missing: string[] = [];
    const missingHashes = new Set<string>();
    for (const [index, hash] of hashes.entries())
      if (!this.vectors.has(hash) && !missingHashes.has(hash)) {
        missingHashes.add(hash);
        missing.push(texts[index] ?? "");
      }
    if (missing.length > 0) {
      const result = await this.client.embed(missing);
      for (const [index, text] of missing.entries()) {
        const vector = result.vectors[index];
        if (vector !== undefined) this.vectors.set(textHash(text), vector);
      }
      this.dirty = true;
    }
    return hashes.map((hash) => this.vectors.get(hash) ?? []);
  }

  async embedQuery(query: string): Promise<number[]> {
    return (await this.client.embed([query])).vectors[0] ?? [];
  }

  /** Write the cache when something new was embedded; returns whether it was written. */
  async save(): Promise<boolean> {
    if (this.file === undefined || !this.dirty) return false;
    const content: CacheFile = {
      format: WIKI_EMBEDDINGS_FORMAT,
      model: this.client.spec,
      vectors: {},
    };
    for (const [hash, vector] of [...this.vectors.entries()].sort(([left], [right]) =>
      left < right ? -1 : 1,
    ))
      content.vectors[hash] = encodeVector(vector);
    try {
      await writeFileAtomic(this.file, `${JSON.stringify(content)}\n`);
      this.dirty = false;
      return true;
    } catch {
      // The cache only saves embedding calls: a wiki we may not write (an installed example, a
      // read-only mount) is still searched, the vectors are simply computed again next time.
      return false;
    }
  }
}

/** Indexes of `vectors` by descending cosine with `query` (ties by index), at most `count`. */
export function rankByCosine(
  query: readonly number[],
  vectors: readonly (readonly number[])[],
  count: number,
): { index: number; similarity: number }[] {
  return vectors
    .map((vector, index) => ({ index, similarity: cosineSimilarity(query, vector) }))
    .sort((left, right) => right.similarity - left.similarity || left.index - right.index)
    .slice(0, count);
}

/**
 * The embedding model for search: flag > `SKILLSMITH_EMBEDDING_MODEL` > `wiki.embeddingModel`
 * of `skillsmith.config.json` (or the file named by `SKILLSMITH_CONFIG`) > none.
 */
export function resolveSearchEmbeddingModel(
  flag: string | undefined,
  source: { readonly cwd: string; readonly env: Readonly<Record<string, string | undefined>> },
): EmbeddingModelChoice | undefined {
  return resolveEmbeddingModel(flag, "wiki", source);
}
