/** Model spec strings: `anthropic:<model>`, `openai:<model>`, `openai-compatible:<model>@<base-url>`. */
import { InputError } from "../core/errors.js";

export type ProviderName = "anthropic" | "openai" | "openai-compatible";

export const providerNames: readonly ProviderName[] = ["anthropic", "openai", "openai-compatible"];

export interface ModelSpec {
  readonly provider: ProviderName;
  readonly model: string;
  /** Only for `openai-compatible`, where the endpoint is part of the spec. */
  readonly baseUrl?: string;
}

const expected =
  'expected "anthropic:<model>", "openai:<model>" or "openai-compatible:<model>@<base-url>" (e.g. "anthropic:claude-haiku-4-5", "openai-compatible:qwen3@http://127.0.0.1:11434/v1")';

/** Parse a spec string; `field` names where it came from (a flag or a config field) in errors. */
export function parseModelSpec(text: string, field = "model"): ModelSpec {
  const fail = (problem: string): never => {
    throw new InputError(
      "model.spec-invalid",
      `${problem}: ${expected}`,
      { field },
      { data: { spec: text } },
    );
  };
  const colon = text.indexOf(":");
  if (colon <= 0) return fail(`"${text}" names no provider`);
  const provider = text.slice(0, colon);
  const rest = text.slice(colon + 1);
  if (!(providerNames as readonly string[]).includes(provider))
    return fail(`unknown provider "${provider}" in "${text}"`);
  if (provider === "openai-compatible") {
    const at = rest.indexOf("@");
    if (at <= 0) return fail(`"${text}" needs a model and a base URL`);
    const model = rest.slice(0, at).trim();
    const baseUrl = rest.slice(at + 1).trim();
    let url: URL | undefined;
    try {
      url = new URL(baseUrl);
    } catch {
      // A probe: an unparsable URL is reported just below, naming the spec.
      url = undefined;
    }
    if (url === undefined || (url.protocol !== "http:" && url.protocol !== "https:"))
      return fail(`"${baseUrl}" in "${text}" is not an http(s) URL`);
    return { provider: "openai-compatible", model, baseUrl: baseUrl.replace(/\/+$/, "") };
  }
  const model = rest.trim();
  if (model === "") return fail(`"${text}" has an empty model name`);
  return { provider: provider as ProviderName, model };
}

export function formatModelSpec(spec: ModelSpec): string {
  return spec.provider === "openai-compatible"
    ? `${spec.provider}:${spec.model}@${spec.baseUrl ?? ""}`
    : `${spec.provider}:${spec.model}`;
}
