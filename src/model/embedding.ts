/**
 * Text embeddings through the AI SDK, for the retrieval strategies that rank by similarity (the
 * wiki's `embedding` selection, synthesis retrieval). Keys and base URLs resolve exactly as for
 * language models: flag > environment variable > config file > default.
 */
// Types only: the AI SDK and the provider load on the first `embed` (start-up cost otherwise).
import type { EmbeddingModel } from "ai";
import { UnsupportedError } from "../core/errors.js";
import {
  loadModelConfig,
  type ModelConfig,
  type ResolvedProviderSettings,
  resolveProviderSettings,
} from "./config.js";
import { sdkSettings } from "./provider.js";
import { type RetryOptions, withRetries } from "./retry.js";
import { formatModelSpec, type ModelSpec, parseModelSpec } from "./spec.js";

export interface EmbeddingClientOptions {
  /** `openai:<model>` or `openai-compatible:<model>[@<base-url>]`. */
  readonly spec: string | ModelSpec;
  readonly baseUrl?: string;
  readonly apiKey?: string;
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Where to look for the config file (default: the process's working directory). */
  readonly cwd?: string;
  readonly config?: ModelConfig;
  readonly retry?: RetryOptions;
  /** Inputs per request; providers cap the batch size (OpenAI: 2,048). */
  readonly batchSize?: number;
}

export interface EmbeddingResult {
  /** One vector per input, in input order. */
  readonly vectors: number[][];
  readonly model: string;
  readonly usage: { readonly inputTokens: number };
}

export interface EmbeddingClient {
  /** The model as a spec string, e.g. `openai:text-embedding-3-small`: what run logs record. */
  readonly spec: string;
  readonly settings: ResolvedProviderSettings;
  embed(
    texts: readonly string[],
    options?: { readonly signal?: AbortSignal },
  ): Promise<EmbeddingResult>;
}

const defaultBatchSize = 256;

async function embeddingModelFor(
  spec: ModelSpec,
  settings: ResolvedProviderSettings,
): Promise<EmbeddingModel> {
  switch (spec.provider) {
    case "openai": {
      const { createOpenAI } = await import("@ai-sdk/openai");
      return createOpenAI(sdkSettings(settings)).embedding(spec.model);
    }
    case "openai-compatible": {
      const { createOpenAICompatible } = await import("@ai-sdk/openai-compatible");
      return createOpenAICompatible({
        name: "openai-compatible",
        ...sdkSettings(settings),
      }).embeddingModel(spec.model);
    }
    case "anthropic":
      throw unsupportedProvider(spec);
  }
}

function unsupportedProvider(spec: ModelSpec): UnsupportedError {
  return new UnsupportedError(
    "model.embedding-unsupported-provider",
    `"${formatModelSpec(spec)}" cannot embed: Anthropic offers no embeddings API; use an openai: or openai-compatible: embedding model`,
  );
}

export function createEmbeddingClient(options: EmbeddingClientOptions): EmbeddingClient {
  const spec =
    typeof options.spec === "string"
      ? parseModelSpec(options.spec, "embedding model")
      : options.spec;
  if (spec.provider === "anthropic") {
    // Refuse before resolving keys, so the error says what is wrong rather than "no API key".
    throw unsupportedProvider(spec);
  }
  const env = options.env ?? process.env;
  const config =
    options.config ?? loadModelConfig({ cwd: options.cwd ?? process.cwd(), env }).config;
  const settings = resolveProviderSettings(spec, {
    flags: {
      ...(options.apiKey === undefined ? {} : { apiKey: options.apiKey }),
      ...(options.baseUrl === undefined ? {} : { baseUrl: options.baseUrl }),
    },
    env,
    config,
  });
  let model: Promise<EmbeddingModel> | undefined;
  const batchSize = Math.max(1, options.batchSize ?? defaultBatchSize);
  const specText = formatModelSpec(spec);
  return {
    spec: specText,
    settings,
    async embed(texts, callOptions = {}) {
      const { embedMany } = await import("ai");
      model ??= embeddingModelFor(spec, settings);
      const embeddingModel = await model;
      const vectors: number[][] = [];
      let inputTokens = 0;
      for (let start = 0; start < texts.length; start += batchSize) {
        const batch = texts.slice(start, start + batchSize);
        const result = await withRetries(
          () =>
            embedMany({
              model: embeddingModel,
              values: [...batch],
              // Our retry layer is the only one, as for language models.
              maxRetries: 0,
              ...(callOptions.signal === undefined ? {} : { abortSignal: callOptions.signal }),
            }),
          options.retry ?? {},
          `embedding call to ${specText}`,
        );
        vectors.push(...result.embeddings);
        inputTokens += result.usage.tokens;
      }
      return { vectors, model: spec.model, usage: { inputTokens } };
    },
  };
}

/** Cosine similarity; 0 when either vector has no length (rather than NaN). */
export function cosineSimilarity(left: readonly number[], right: readonly number[]): number {
  const length = Math.min(left.length, right.length);
  let dot = 0;
  let leftNorm = 0;
  let rightNorm = 0;
  for (let index = 0; index < length; index += 1) {
    const a = left[index] ?? 0;
    const b = right[index] ?? 0;
    dot += a * b;
    leftNorm += a * a;
    rightNorm += b * b;
  }
  if (leftNorm === 0 || rightNorm === 0) return 0;
  return dot / Math.sqrt(leftNorm * rightNorm);
}
