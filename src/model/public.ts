/**
 * `skillsmith/model`: model access through the Vercel AI SDK (spec strings, keys, retries, usage
 * and cost, a call cache, redaction) and the scripted model server that speaks the Anthropic and
 * OpenAI HTTP APIs, so real agent CLIs run offline in tests.
 *
 * @packageDocumentation
 */
export { type CacheMode, ModelCallCache } from "./cache.js";
export {
  ModelClient,
  type ModelClientOptions,
  type TextRequest,
  type TextResult,
} from "./client.js";
export { loadModelConfig, type ModelConfig, resolveProviderSettings } from "./config.js";
export { createEmbeddingClient, type EmbeddingClient } from "./embedding.js";
export { CacheMissError, ModelOutputError } from "./errors.js";
export { costOf, defaultPrices, type ModelPrice, priceFor, type TokenUsage } from "./prices.js";
export { createLanguageModel } from "./provider.js";
export { redactSecrets, secretsFromEnvironment } from "./redact.js";
// Experimental (see the README): the scripted server.
export {
  loadScript,
  parseScript,
  type RecordedRequest,
  type Script,
  type ScriptedServer,
  type ScriptedServerOptions,
  startScriptedServer,
} from "./scripted/index.js";
export { formatModelSpec, type ModelSpec, parseModelSpec } from "./spec.js";
export { UsageLedger, type UsageTotals } from "./usage.js";
