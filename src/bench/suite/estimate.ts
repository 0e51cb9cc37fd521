/**
 * What running a whole suite would cost, before anything is spent: runs per configuration
 * (skills × requirements × 2 arms × repeats) times the price of one run of its model. The
 * model comes from the configuration, else from its harness's registration (harnesses own
 * their facts); the price from the run's overrides, else the built-in table. A model with no
 * known price is said to be unknown, never guessed.
 */
import { harnessFacts } from "../../agents/registry.js";
import { costOf, type ModelPrice, priceFor } from "../../model/prices.js";
import { parseModelSpec } from "../../model/spec.js";
import type { Suite } from "./types.js";

/**
 * Tokens one agent run is assumed to use when nothing was measured: a medium coding task of a
 * CLI agent (the same assumption `skillsmith eval` states with its estimate).
 */
export const ASSUMED_RUN_TOKENS = {
  inputTokens: 150_000,
  cachedInputTokens: 0,
  outputTokens: 8_000,
} as const;

export interface ConfigurationEstimate {
  readonly config: string;
  readonly agent: string;
  /** The model spec the runs use; undefined when neither configuration nor harness names one. */
  readonly model: string | undefined;
  readonly runs: number;
  readonly usdPerRun: number | null;
  readonly usd: number | null;
  /** Why the price is unknown, and how to give it. */
  readonly unknown?: string;
}

export interface SuiteEstimate {
  readonly runs: number;
  /** Dollars for every run; null when any configuration's price is unknown. */
  readonly usd: number | null;
  /** Dollars of the configurations whose price is known. */
  readonly knownUsd: number;
  readonly configurations: readonly ConfigurationEstimate[];
  readonly assumed: typeof ASSUMED_RUN_TOKENS;
}

export interface EstimateOptions {
  readonly repeats?: number;
  readonly prices?: Readonly<Record<string, ModelPrice>>;
  /** Harnesses that spend nothing on a model (replay, none, oracle) are priced at 0. */
  readonly agentOverride?: string;
  readonly modelOverride?: string;
}

function priceOf(
  spec: string,
  prices: Readonly<Record<string, ModelPrice>>,
): { price?: ModelPrice; problem?: string } {
  try {
    const price = priceFor(parseModelSpec(spec), prices);
    return price === undefined ? {} : { price };
  } catch (error) {
    // The estimate only: the run reads the spec again and reports the mistake where it is used.
    return { problem: error instanceof Error ? error.message : String(error) };
  }
}

export function estimateSuiteCost(suite: Suite, options: EstimateOptions = {}): SuiteEstimate {
  const repeats = options.repeats ?? suite.protocol?.repeats ?? 1;
  const prices = options.prices ?? {};
  const requirements = suite.skills.reduce((sum, skill) => sum + skill.requirements.length, 0);
  const runs = requirements * 2 * repeats;
  const configurations = suite.configurations.map((configuration): ConfigurationEstimate => {
    const agent = options.agentOverride ?? configuration.agent;
    const facts = harnessFacts(agent);
    const model = options.modelOverride ?? configuration.model ?? facts.defaultModel;
    const base = { config: configuration.id, agent, model, runs };
    // A harness that talks to no model endpoint (replay, none, oracle) spends nothing.
    if (facts.keyVariables === undefined) return { ...base, usdPerRun: 0, usd: 0 };
    if (model === undefined) {
      return {
        ...base,
        usdPerRun: null,
        usd: null,
        unknown: `no model: set "model:" on configuration ${configuration.id}`,
      };
    }
    const { price, problem } = priceOf(model, prices);
    if (price === undefined) {
      return {
        ...base,
        usdPerRun: null,
        usd: null,
        unknown:
          problem ??
          `no price for ${model}: add it to model.prices in skillsmith.config.json ({"input": …, "output": …} dollars per million tokens)`,
      };
    }
    const usdPerRun = costOf(ASSUMED_RUN_TOKENS, price);
    return { ...base, usdPerRun, usd: usdPerRun * runs };
  });
  const known = configurations.filter((item) => item.usd !== null);
  return {
    runs: runs * configurations.length,
    usd:
      known.length === configurations.length
        ? known.reduce((sum, item) => sum + (item.usd as number), 0)
        : null,
    knownUsd: known.reduce((sum, item) => sum + (item.usd as number), 0),
    configurations,
    assumed: ASSUMED_RUN_TOKENS,
  };
}

/** The estimate as lines for a terminal. */
export function renderSuiteEstimate(estimate: SuiteEstimate): string[] {
  const dollars = (value: number) => `$${value.toFixed(2)}`;
  const total =
    estimate.usd === null
      ? `at least ${dollars(estimate.knownUsd)} (some prices are unknown, below)`
      : dollars(estimate.usd);
  return [
    `cost estimate for the whole suite: ${estimate.runs} agent runs, ${total}; assumes ${estimate.assumed.inputTokens} input and ${estimate.assumed.outputTokens} output tokens a run, at list prices; runs already stored are not run again`,
    ...estimate.configurations.map(
      (item) =>
        `  ${item.config} (${item.agent}${item.model === undefined ? "" : `, ${item.model}`}): ${item.runs} runs, ${item.usd === null ? `unknown — ${item.unknown ?? ""}` : `${dollars(item.usd)} (${dollars(item.usdPerRun ?? 0)} a run)`}`,
    ),
  ];
}
