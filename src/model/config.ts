/**
 * Where keys, base URLs, prices and limits come from: a flag, else the environment, else the
 * `model` section of `skillsmith.config.json` (in the working directory, or the file named by
 * `SKILLSMITH_CONFIG`), else a default.
 */
import { existsSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { z } from "zod";
import { InputError } from "../core/errors.js";
import { parseInput } from "../core/parse.js";
import { registerSecret } from "./redact.js";
import type { ModelSpec, ProviderName } from "./spec.js";

const providerSettingsSchema = z.strictObject({
  apiKey: z.string().min(1).optional(),
  baseUrl: z.url().optional(),
});

const priceSchema = z.strictObject({
  input: z.number().nonnegative(),
  cachedInput: z.number().nonnegative().optional(),
  output: z.number().nonnegative(),
});

export type ModelPrice = z.infer<typeof priceSchema>;

const modelSectionSchema = z.strictObject({
  providers: z
    .strictObject({
      anthropic: providerSettingsSchema.optional(),
      openai: providerSettingsSchema.optional(),
      "openai-compatible": providerSettingsSchema.optional(),
    })
    .optional(),
  /** Dollars per million tokens, keyed by `provider:model` or by bare model id. */
  prices: z.record(z.string(), priceSchema).optional(),
  /** Concurrent calls allowed per provider. */
  concurrency: z.record(z.string(), z.number().int().positive()).optional(),
});

export type ModelConfig = z.infer<typeof modelSectionSchema>;

/** The file only concerns us through its `model` section; other modules own other sections. */
const configFileSchema = z.looseObject({ model: modelSectionSchema.optional() });

export const configFileName = "skillsmith.config.json";

export interface ConfigSource {
  readonly cwd: string;
  readonly env: Readonly<Record<string, string | undefined>>;
}

/** Load the `model` section of the config file; an absent file is an empty config. */
export function loadModelConfig(source: ConfigSource): { config: ModelConfig; path?: string } {
  const explicit = source.env.SKILLSMITH_CONFIG;
  const path = resolve(source.cwd, explicit ?? configFileName);
  if (!existsSync(path)) {
    if (explicit !== undefined)
      throw new InputError(
        "model.config-missing",
        "the file named by SKILLSMITH_CONFIG does not exist",
        {
          file: path,
        },
      );
    return { config: {} };
  }
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(path, "utf8"));
  } catch (cause) {
    throw new InputError(
      "model.config-syntax",
      `not valid JSON: ${cause instanceof Error ? cause.message : String(cause)}`,
      { file: path },
      { cause },
    );
  }
  const parsed = parseInput(configFileSchema, value, {
    code: "model.config-invalid",
    location: { file: path },
  });
  return { config: parsed.model ?? {}, path };
}

export interface ProviderFlags {
  readonly apiKey?: string;
  readonly baseUrl?: string;
}

export type SettingSource = "flag" | "environment" | "config" | "spec" | "default" | "none";

export interface ResolvedProviderSettings {
  readonly apiKey?: string;
  readonly baseUrl: string;
  readonly apiKeySource: SettingSource;
  readonly baseUrlSource: SettingSource;
}

const environmentNames: Record<ProviderName, { apiKey: string; baseUrl?: string }> = {
  anthropic: { apiKey: "ANTHROPIC_API_KEY", baseUrl: "ANTHROPIC_BASE_URL" },
  openai: { apiKey: "OPENAI_API_KEY", baseUrl: "OPENAI_BASE_URL" },
  "openai-compatible": { apiKey: "SKILLSMITH_OPENAI_COMPATIBLE_API_KEY" },
};

const defaultBaseUrls: Record<"anthropic" | "openai", string> = {
  anthropic: "https://api.anthropic.com/v1",
  openai: "https://api.openai.com/v1",
};

/**
 * Anthropic's own clients (and Claude Code) take `ANTHROPIC_BASE_URL` without the `/v1` that the
 * AI SDK expects, so one variable serves both: `/v1` is appended when missing.
 */
function normaliseBaseUrl(provider: ProviderName, url: string): string {
  const trimmed = url.replace(/\/+$/, "");
  if (provider === "anthropic" && !/\/v1$/.test(trimmed)) return `${trimmed}/v1`;
  return trimmed;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === "" ? undefined : value;
}

/** Resolve key and base URL for a spec: flag > environment > (spec) > config file > default. */
export function resolveProviderSettings(
  spec: ModelSpec,
  options: {
    flags?: ProviderFlags;
    env: Readonly<Record<string, string | undefined>>;
    config: ModelConfig;
  },
): ResolvedProviderSettings {
  const names = environmentNames[spec.provider];
  const fromConfig = options.config.providers?.[spec.provider] ?? {};
  const flags = options.flags ?? {};

  const keyCandidates: [string | undefined, SettingSource][] = [
    [nonEmpty(flags.apiKey), "flag"],
    [nonEmpty(options.env[names.apiKey]), "environment"],
    [nonEmpty(fromConfig.apiKey), "config"],
  ];
  const key = keyCandidates.find(([value]) => value !== undefined);

  const urlCandidates: [string | undefined, SettingSource][] = [
    [nonEmpty(flags.baseUrl), "flag"],
    [names.baseUrl === undefined ? undefined : nonEmpty(options.env[names.baseUrl]), "environment"],
    // An openai-compatible spec names its endpoint explicitly, so it outranks the config file.
    [spec.baseUrl, "spec"],
    [nonEmpty(fromConfig.baseUrl), "config"],
    [spec.provider === "openai-compatible" ? undefined : defaultBaseUrls[spec.provider], "default"],
  ];
  const url = urlCandidates.find(([value]) => value !== undefined);
  if (url?.[0] === undefined)
    throw new InputError(
      "model.base-url-missing",
      `no base URL for the openai-compatible provider: give it in the spec (openai-compatible:<model>@<base-url>) or as "model.providers.openai-compatible.baseUrl" in ${configFileName}`,
      { field: "model" },
    );

  // Local OpenAI-compatible servers usually need no key; the hosted APIs always do.
  if (key === undefined && spec.provider !== "openai-compatible")
    throw new InputError(
      "model.api-key-missing",
      // No command-line flag carries a key (it would show in `ps` and shell history), so the
      // message names only the two places a key can come from.
      `no API key for provider "${spec.provider}": set ${names.apiKey} (export ${names.apiKey}=…) or "model.providers.${spec.provider}.apiKey" in ${configFileName}`,
      { field: names.apiKey },
    );

  // Whichever way the key came (flag, environment, configuration file), every store and output
  // boundary of this process removes it from then on.
  registerSecret(key?.[0]);
  return {
    ...(key?.[0] === undefined ? {} : { apiKey: key[0] }),
    apiKeySource: key?.[1] ?? "none",
    baseUrl: normaliseBaseUrl(spec.provider, url[0]),
    baseUrlSource: url[1],
  };
}
