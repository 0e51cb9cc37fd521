/** AI SDK language models for a spec, with key and base URL already resolved. */
import { createAnthropic } from "@ai-sdk/anthropic";
import { createOpenAI } from "@ai-sdk/openai";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import type { wrapLanguageModel } from "ai";
import type { ResolvedProviderSettings } from "./config.js";
import type { ModelSpec } from "./spec.js";

export interface LanguageModelOptions {
  /** Which OpenAI API `openai:` specs use; the Responses API by default, as the AI SDK does. */
  readonly openaiApi?: "responses" | "chat";
}

/** A provider language model as the AI SDK middleware takes it (no gateway model-id strings). */
export type ProviderLanguageModel = Parameters<typeof wrapLanguageModel>[0]["model"];

export function createLanguageModel(
  spec: ModelSpec,
  settings: Pick<ResolvedProviderSettings, "apiKey" | "baseUrl">,
  options: LanguageModelOptions = {},
): ProviderLanguageModel {
  switch (spec.provider) {
    case "anthropic":
      return createAnthropic({ apiKey: settings.apiKey, baseURL: settings.baseUrl })(spec.model);
    case "openai": {
      const provider = createOpenAI({ apiKey: settings.apiKey, baseURL: settings.baseUrl });
      return options.openaiApi === "chat"
        ? provider.chat(spec.model)
        : provider.responses(spec.model);
    }
    case "openai-compatible":
      return createOpenAICompatible({
        name: "openai-compatible",
        baseURL: settings.baseUrl,
        ...(settings.apiKey === undefined ? {} : { apiKey: settings.apiKey }),
        // Without it, streamed answers from OpenAI-compatible servers carry no token counts.
        includeUsage: true,
      }).chatModel(spec.model);
  }
}
