/** The versioned prompt files of `prompts/synth/`, read once and filled by placeholder. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { InternalError } from "../core/errors.js";
import { packageRoot } from "../core/paths.js";

export const promptVersion = "v1";

const cache = new Map<string, string>();

/** The text of `prompts/synth/<name>` (e.g. `solver-v1.system.md`). */
export function promptText(name: string): string {
  const cached = cache.get(name);
  if (cached !== undefined) return cached;
  const text = readFileSync(join(packageRoot(), "prompts", "synth", name), "utf8");
  cache.set(name, text);
  return text;
}

/** Replace every `{{key}}`; a placeholder without a value is a bug in the caller. */
export function fillPrompt(template: string, values: Readonly<Record<string, string>>): string {
  return template.replace(/\{\{(\w+)\}\}/g, (_match, key: string) => {
    const value = values[key];
    if (value === undefined)
      throw new InternalError("synth.prompt-placeholder", `no value for {{${key}}} in a prompt`);
    return value;
  });
}
