/**
 * List prices in US dollars per million tokens, as published by the providers when this table
 * was written. They change: users override or extend them in the `model.prices` section of
 * `skillsmith.config.json`, and every cost figure says which price it used.
 */
import type { ModelPrice } from "./config.js";
import type { ModelSpec } from "./spec.js";

export type { ModelPrice };

export const defaultPrices: Readonly<Record<string, ModelPrice>> = {
  "claude-haiku-4-5": { input: 1, cachedInput: 0.1, output: 5 },
  "claude-sonnet-4-5": { input: 3, cachedInput: 0.3, output: 15 },
  "claude-sonnet-4": { input: 3, cachedInput: 0.3, output: 15 },
  "claude-opus-4-5": { input: 5, cachedInput: 0.5, output: 25 },
  "claude-opus-4-1": { input: 15, cachedInput: 1.5, output: 75 },
  "claude-opus-4": { input: 15, cachedInput: 1.5, output: 75 },
  "claude-3-5-haiku": { input: 0.8, cachedInput: 0.08, output: 4 },
  "gpt-5": { input: 1.25, cachedInput: 0.125, output: 10 },
  "gpt-5-mini": { input: 0.25, cachedInput: 0.025, output: 2 },
  "gpt-5-nano": { input: 0.05, cachedInput: 0.005, output: 0.4 },
  "gpt-4.1": { input: 2, cachedInput: 0.5, output: 8 },
  "gpt-4.1-mini": { input: 0.4, cachedInput: 0.1, output: 1.6 },
  "gpt-4o": { input: 2.5, cachedInput: 1.25, output: 10 },
  "gpt-4o-mini": { input: 0.15, cachedInput: 0.075, output: 0.6 },
};

/**
 * The price of a model: an override for `provider:model`, then for the bare model id, then the
 * built-in table. Dated snapshots (`claude-haiku-4-5-20251001`) use the longest table entry
 * they start with. `undefined` when nothing is known (e.g. a local model).
 */
export function priceFor(
  spec: Pick<ModelSpec, "provider" | "model">,
  overrides: Readonly<Record<string, ModelPrice>> = {},
): ModelPrice | undefined {
  const exact = overrides[`${spec.provider}:${spec.model}`] ?? overrides[spec.model];
  if (exact !== undefined) return exact;
  const table = { ...defaultPrices, ...overrides };
  if (table[spec.model] !== undefined) return table[spec.model];
  const prefix = Object.keys(table)
    .filter((name) => spec.model.startsWith(`${name}-`))
    .sort((left, right) => right.length - left.length)[0];
  return prefix === undefined ? undefined : table[prefix];
}

export interface TokenUsage {
  /** All input tokens, cached ones included. */
  readonly inputTokens: number;
  readonly cachedInputTokens: number;
  readonly outputTokens: number;
}

/** Dollars for one call: uncached input, cached input (at the input price if none is given), output. */
export function costOf(usage: TokenUsage, price: ModelPrice): number {
  const cached = Math.min(usage.cachedInputTokens, usage.inputTokens);
  const uncached = usage.inputTokens - cached;
  return (
    (uncached * price.input +
      cached * (price.cachedInput ?? price.input) +
      usage.outputTokens * price.output) /
    1_000_000
  );
}
