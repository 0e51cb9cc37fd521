/**
 * Synthesis settings: which embedding model retrieval uses, from the `synth` section of
 * `skillsmith.config.json`. Precedence: flag > `SKILLSMITH_EMBEDDING_MODEL` > config > none (BM25).
 */
import {
  type EmbeddingModelChoice,
  resolveEmbeddingModel as resolveModel,
} from "../model/index.js";

/** The embedding model to retrieve with, and where the choice came from; undefined means BM25. */
export function resolveEmbeddingModel(
  flag: string | undefined,
  source: { readonly cwd: string; readonly env: Readonly<Record<string, string | undefined>> },
): EmbeddingModelChoice | undefined {
  return resolveModel(flag, "synth", source);
}
