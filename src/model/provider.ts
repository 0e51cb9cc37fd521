/**
 * AI SDK language models for a spec, with key and base URL already resolved. The provider
 * package is imported when its first model is created, and only that provider's: each costs
 * ~0.1 s of start-up that commands calling no model should not pay.
 */
import type { wrapLanguageModel } from "ai";
import type { ResolvedProviderSettings } from "./config.js";
import type { ModelSpec } from "./spec.js";

export interface LanguageModelOptions {
  /** Which OpenAI API `openai:` specs use; the Responses API by default, as the AI SDK does. */
  readonly openaiApi?: "responses" | "chat";
}

/** A provider language model as the AI SDK middleware takes it (no gateway model-id strings). */
export type ProviderLanguageModel = Parameters<typeof wrapLanguageModel>[0]["model"];

/**
 * The settings every AI SDK provider factory takes: the base URL, and the key only when there is
 * one (an absent key lets the SDK read its own environment variable, as before).
 */
export function sdkSettings(settings: Pick<ResolvedProviderSettings, "apiKey" | "baseUrl">): {
  baseURL: string;
  apiKey?: string;
} {
  return {
    baseURL: settings.baseUrl,
    ...(settings.apiKey === undefined ? {} : { apiKey: settings.apiKey }),
  };
}

export async function createLanguageModel(
  spec: ModelSpec,
  settings: Pick<ResolvedProviderSettings, "apiKey" | "baseUrl">,
  options: LanguageModelOptions = {},
): Promise<ProviderLanguageModel> {
  switch (spec.provider) {
    case "anthropic": {
      const { createAnthropic } = await import("@ai-sdk/anthropic");
      return createAnthropic(sdkSettings(settings))(spec.model);
    }
    case "openai": {
      const { createOpenAI } = await import("@ai-sdk/openai");
      const provider = createOpenAI(sdkSettings(settings));
      return options.openaiApi === "chat"
        ? provider.chat(spec.model)
        : provider.responses(spec.model);
    }
    case "openai-compatible": {
      const { createOpenAICompatible } = await import("@ai-sdk/openai-compatible");
      return createOpenAICompatible({
        name: "openai-compatible",
        ...sdkSettings(settings),
        // Without it, streamed answers from OpenAI-compatible servers carry no token counts.
        includeUsage: true,
      }).chatModel(spec.model);
    }
  }
}
