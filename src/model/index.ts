/** Model access (spec strings, keys, retries, usage and cost, call cache, redaction) and the scripted model server. */

export { Semaphore } from "../core/limit.js";
export {
  type CacheMode,
  type CallIdentity,
  cacheKey,
  cacheModes,
  canonicalJson,
  ModelCallCache,
  sha256,
} from "./cache.js";
export {
  defaultConcurrency,
  extractJson,
  ModelClient,
  type ModelClientOptions,
  type ObjectResult,
  ProviderLimits,
  type TextRequest,
  type TextResult,
} from "./client.js";
export {
  type ConfigSource,
  configFileName,
  loadModelConfig,
  type ModelConfig,
  type ProviderFlags,
  type ResolvedProviderSettings,
  resolveProviderSettings,
  type SettingSource,
} from "./config.js";
export {
  cosineSimilarity,
  createEmbeddingClient,
  type EmbeddingClient,
  type EmbeddingClientOptions,
  type EmbeddingResult,
} from "./embedding.js";
export {
  EMBEDDING_MODEL_VARIABLE,
  type EmbeddingModelChoice,
  embeddingModelFromConfig,
  resolveEmbeddingModel,
} from "./embedding-config.js";
export { CacheMissError, ModelOutputError } from "./errors.js";
export {
  type CallPolicy,
  callIdentity,
  createCallPolicyMiddleware,
  normaliseUsage,
} from "./middleware.js";
export { costOf, defaultPrices, type ModelPrice, priceFor, type TokenUsage } from "./prices.js";
export {
  createLanguageModel,
  type LanguageModelOptions,
  type ProviderLanguageModel,
} from "./provider.js";
export {
  appendRedactedJsonLine,
  knownSecrets,
  redactedJson,
  redactedJsonFile,
  redactFileContent,
  redactionMarker,
  redactKnownSecrets,
  redactSecrets,
  registerEnvironmentSecrets,
  registerSecret,
  secretsFromEnvironment,
  writeRedactedFile,
} from "./redact.js";
export {
  backoffDelay,
  classifyFailure,
  defaultRetryOptions,
  type FailureClass,
  parseRetryAfter,
  type RetryOptions,
  withRetries,
} from "./retry.js";
export * from "./scripted/index.js";
export {
  formatModelSpec,
  type ModelSpec,
  type ProviderName,
  parseModelSpec,
  providerNames,
} from "./spec.js";
export { UsageLedger, type UsageRecord, type UsageTotals } from "./usage.js";
