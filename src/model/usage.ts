/** Token usage and cost per call, totalled per run and per role (requirement writer, solver, critic, ...). */
import { costOf, type ModelPrice, priceFor, type TokenUsage } from "./prices.js";
import type { ModelSpec } from "./spec.js";

export interface UsageRecord extends TokenUsage {
  readonly role: string;
  readonly provider: string;
  readonly model: string;
  /** Dollars; 0 for a cache hit (nothing was paid) and for a model without a known price. */
  readonly costUsd: number;
  readonly priced: boolean;
  readonly fromCache: boolean;
}

export interface UsageTotals extends TokenUsage {
  readonly calls: number;
  readonly cacheHits: number;
  /** Calls whose model had no price: their cost is missing from `costUsd`. */
  readonly unpricedCalls: number;
  readonly costUsd: number;
}

const emptyTotals: UsageTotals = {
  calls: 0,
  cacheHits: 0,
  unpricedCalls: 0,
  inputTokens: 0,
  cachedInputTokens: 0,
  outputTokens: 0,
  costUsd: 0,
};

function add(totals: UsageTotals, record: UsageRecord): UsageTotals {
  return {
    calls: totals.calls + 1,
    cacheHits: totals.cacheHits + (record.fromCache ? 1 : 0),
    unpricedCalls: totals.unpricedCalls + (record.priced ? 0 : 1),
    inputTokens: totals.inputTokens + record.inputTokens,
    cachedInputTokens: totals.cachedInputTokens + record.cachedInputTokens,
    outputTokens: totals.outputTokens + record.outputTokens,
    costUsd: totals.costUsd + record.costUsd,
  };
}

/**
 * Collects the usage of every model call of a run. Callers name the `role` the call served;
 * tokens always count (they measure work), dollars only when a call was actually paid for.
 */
export class UsageLedger {
  private readonly entries: UsageRecord[] = [];

  constructor(private readonly priceOverrides: Readonly<Record<string, ModelPrice>> = {}) {}

  record(entry: {
    role: string;
    spec: Pick<ModelSpec, "provider" | "model">;
    usage: TokenUsage;
    fromCache?: boolean;
  }): UsageRecord {
    const price = priceFor(entry.spec, this.priceOverrides);
    const fromCache = entry.fromCache ?? false;
    const record: UsageRecord = {
      role: entry.role,
      provider: entry.spec.provider,
      model: entry.spec.model,
      inputTokens: entry.usage.inputTokens,
      cachedInputTokens: entry.usage.cachedInputTokens,
      outputTokens: entry.usage.outputTokens,
      priced: price !== undefined,
      fromCache,
      costUsd: price === undefined || fromCache ? 0 : costOf(entry.usage, price),
    };
    this.entries.push(record);
    return record;
  }

  get records(): readonly UsageRecord[] {
    return this.entries;
  }

  totals(): UsageTotals {
    return this.entries.reduce(add, emptyTotals);
  }

  byRole(): Record<string, UsageTotals> {
    const result: Record<string, UsageTotals> = {};
    for (const record of this.entries)
      result[record.role] = add(result[record.role] ?? emptyTotals, record);
    return result;
  }
}
