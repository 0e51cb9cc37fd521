/**
 * The scripted server's embedding "model": a deterministic bag of words, so tests can reason
 * about which texts come out similar (they share words) without any model weights.
 */
import { createHash } from "node:crypto";

export const defaultEmbeddingDimensions = 256;

/** Lower-cased runs of ASCII letters and digits: the "words" the scripted model sees. */
export function embeddingWords(text: string): string[] {
  return text.toLowerCase().match(/[a-z0-9]+/g) ?? [];
}

/**
 * Each word adds 1 to one of `dimensions` buckets chosen by the first four bytes of its SHA-256,
 * then the vector is scaled to length 1 (all zeros for a text without words).
 */
export function scriptedEmbedding(text: string, dimensions = defaultEmbeddingDimensions): number[] {
  const vector = new Array<number>(dimensions).fill(0);
  for (const word of embeddingWords(text)) {
    const bucket = createHash("sha256").update(word).digest().readUInt32BE(0) % dimensions;
    vector[bucket] = (vector[bucket] ?? 0) + 1;
  }
  const norm = Math.sqrt(vector.reduce((sum, value) => sum + value * value, 0));
  return norm === 0 ? vector : vector.map((value) => value / norm);
}
