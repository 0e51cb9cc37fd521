/** The versioned prompt files of `prompts/bench/`, read once and filled by placeholder. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { InternalError } from "../../core/errors.js";
import { packageRoot } from "../../core/paths.js";

/** Recorded in every generated suite, so a suite says which prompts wrote it. */
export const GENERATION_PROMPT_VERSION = "v1";

const cache = new Map<string, string>();

/**
 * The text of `prompts/bench/<name>` without its version header: the leading HTML comment is
 * for people editing the file, not for the model.
 */
export function benchPromptText(name: string): string {
  const cached = cache.get(name);
  if (cached !== undefined) return cached;
  const raw = readFileSync(join(packageRoot(), "prompts", "bench", name), "utf8");
  const text = raw.replace(/^<!--[\s\S]*?-->\s*\n/, "");
  cache.set(name, text);
  return text;
}

/** Replace every `{{key}}`; a placeholder without a value is a bug in the caller. */
export function fillBenchPrompt(
  template: string,
  values: Readonly<Record<string, string>>,
): string {
  return template.replace(/\{\{(\w+)\}\}/g, (_match, key: string) => {
    const value = values[key];
    if (value === undefined) {
      throw new InternalError("bench.prompt-placeholder", `no value for {{${key}}} in a prompt`);
    }
    return value;
  });
}
