/**
 * The configurations one invocation runs: the suite's, selected by id, with the `--agent` /
 * `--model` overrides applied, renamed after what runs when an override changes it.
 */
import { UsageError } from "../../core/errors.js";
import type { Configuration } from "../suite/schema.js";
import type { Suite } from "../suite/types.js";
import { modelSpecOf } from "./model-endpoint.js";
import type { RunInputs } from "./options.js";

/**
 * Where a configuration renamed by `--agent`/`--model` came from; recorded beside it in the
 * manifest (`derivedFrom`).
 */
export interface ConfigurationOrigin {
  /** The suite's configuration id. */
  readonly id: string;
  readonly agent: string;
  readonly model?: string;
  /** The overrides that changed it. */
  readonly overrides: { readonly agent?: string; readonly model?: string };
}

export interface EffectiveConfiguration {
  readonly configuration: Configuration;
  /** Present when the overrides changed what runs, and so the id. */
  readonly derivedFrom?: ConfigurationOrigin;
}

/** Characters a configuration id may hold (`idSchema`); anything else becomes "-". */
function idPart(text: string): string {
  return text.replace(/[^A-Za-z0-9._-]+/g, "-").replace(/^[^A-Za-z0-9]+/, "");
}

/**
 * The id of a configuration whose agent or model an override changed, named after what runs:
 * `<agent>.<model>` (the model without its provider prefix or base URL, e.g.
 * `claude-code.claude-sonnet-4-5`), or `<agent>` for agents without a model (`none`, `oracle`).
 * When the suite has several configurations, the suite's id follows (`….<id>`), so two
 * configurations that differ only in their limits stay apart. It depends on the suite and the
 * overrides only, never on which configurations are selected, so a resumed run (and the queue
 * coordinator, which plans the same way) finds the same keys.
 */
export function overriddenConfigurationId(
  configuration: Pick<Configuration, "agent" | "model">,
  original: { readonly id: string; readonly suiteConfigurations: number },
): string {
  const spec = modelSpecOf(configuration as Configuration);
  const model = spec === configuration.agent ? "" : spec.split(":").slice(1).join(":") || spec;
  const modelName = model.split("@")[0] ?? model;
  const parts = [configuration.agent, modelName];
  if (original.suiteConfigurations > 1) parts.push(original.id);
  const id = idPart(parts.filter((part) => part !== "").join("."));
  return (id === "" ? idPart(original.id) : id).slice(0, 128);
}

/**
 * Configurations of this invocation: selected by id, then with the agent/model overrides. An
 * override that changes what runs renames the configuration (`overriddenConfigurationId`) and
 * records where it came from; one that changes nothing keeps it as it is.
 */
export function resolveConfigurations(
  suite: Suite,
  options: Pick<RunInputs, "configs" | "agentOverride" | "modelOverride">,
): EffectiveConfiguration[] {
  let selected = suite.configurations;
  if (options.configs !== undefined && options.configs.length > 0) {
    const known = new Set(suite.configurations.map((configuration) => configuration.id));
    const unknown = options.configs.filter((id) => !known.has(id));
    if (unknown.length > 0) {
      throw new UsageError(
        "bench.run-config-unknown",
        `unknown configuration ${unknown.map((id) => `"${id}"`).join(", ")}; the suite has: ${[...known].join(", ")}`,
      );
    }
    selected = selected.filter((configuration) => options.configs?.includes(configuration.id));
  }
  const resolved = selected.map((configuration): EffectiveConfiguration => {
    const agent = options.agentOverride ?? configuration.agent;
    const changedAgent = agent !== configuration.agent;
    const model = options.modelOverride ?? (changedAgent ? undefined : configuration.model);
    const { model: _model, ...rest } = configuration;
    const overridden: Configuration = { ...rest, agent, ...(model === undefined ? {} : { model }) };
    if (!changedAgent && modelSpecOf(overridden) === modelSpecOf(configuration)) {
      return { configuration };
    }
    return {
      configuration: {
        ...overridden,
        id: overriddenConfigurationId(overridden, {
          id: configuration.id,
          suiteConfigurations: suite.configurations.length,
        }),
      },
      derivedFrom: {
        id: configuration.id,
        agent: configuration.agent,
        ...(configuration.model === undefined ? {} : { model: configuration.model }),
        overrides: {
          ...(options.agentOverride === undefined ? {} : { agent: options.agentOverride }),
          ...(options.modelOverride === undefined ? {} : { model: options.modelOverride }),
        },
      },
    };
  });
  const ids = resolved.map((item) => item.configuration.id);
  const repeated = ids.filter((id, index) => ids.indexOf(id) !== index);
  if (repeated.length > 0) {
    throw new UsageError(
      "bench.run-config-ambiguous",
      `the overrides give several configurations the id "${repeated[0]}"; select one with --config`,
    );
  }
  return resolved;
}

/** The configurations `resolveConfigurations` gives, without where they came from. */
export function effectiveConfigurations(
  suite: Suite,
  options: Pick<RunInputs, "configs" | "agentOverride" | "modelOverride">,
): Configuration[] {
  return resolveConfigurations(suite, options).map((item) => item.configuration);
}
