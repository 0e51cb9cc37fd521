/**
 * Which model an agent of a configuration talks to, and where: the model spec (the
 * configuration's, else its agent's default) and the endpoint (base URL and key) from the run's
 * options or the environment variables the agents' own clients read.
 */
import { type AgentModel, harnessFacts } from "../../agents/index.js";
import { registerSecret } from "../../model/index.js";
import type { Configuration } from "../suite/schema.js";

export interface ModelEndpoint {
  readonly baseUrl?: string;
  readonly apiKey?: string;
}

/** The run's endpoint: one for every configuration, or one chosen per configuration. */
export type ModelEndpointOption =
  | ModelEndpoint
  | ((configuration: Configuration) => ModelEndpoint | undefined);

export function endpointFor(
  configuration: Configuration,
  options: { readonly modelEndpoint?: ModelEndpointOption },
): ModelEndpoint | undefined {
  const endpoint = options.modelEndpoint;
  return typeof endpoint === "function" ? endpoint(configuration) : endpoint;
}

/**
 * Model endpoints for agents that talk to one, from the variables their own clients read, as
 * their harness registration names them (`ANTHROPIC_BASE_URL`/`ANTHROPIC_API_KEY`, …).
 */
export function endpointFromEnvironment(
  env: Readonly<Record<string, string | undefined>>,
): (configuration: Configuration) => ModelEndpoint | undefined {
  return (configuration) => {
    // The harness's registration names its client's variables; none: it talks to no endpoint.
    const names = harnessFacts(configuration.agent).keyVariables?.(configuration.model);
    if (names === undefined) return undefined;
    // A configuration served elsewhere names its URL and its key's variable in the suite.
    const baseUrl = configuration.endpoint?.baseUrl ?? env[names.baseUrl];
    const apiKey = env[configuration.endpoint?.apiKeyVariable ?? names.apiKey];
    return {
      ...(baseUrl === undefined || baseUrl === "" ? {} : { baseUrl }),
      ...(apiKey === undefined || apiKey === "" ? {} : { apiKey }),
    };
  };
}

/** The model an agent is given: its spec and endpoint, the key registered for redaction. */
export function modelFor(
  configuration: Configuration,
  options: { readonly modelEndpoint?: ModelEndpointOption },
): AgentModel {
  const spec = modelSpecOf(configuration);
  const endpoint = endpointFor(configuration, options);
  // Whatever path the key takes from here, the store and the CLI output remove it.
  registerSecret(endpoint?.apiKey);
  return {
    spec,
    ...(endpoint?.baseUrl === undefined ? {} : { baseUrl: endpoint.baseUrl }),
    ...(endpoint?.apiKey === undefined ? {} : { apiKey: endpoint.apiKey }),
  };
}

/** The model spec a configuration runs with (its agent's name for agents without a model). */
export function modelSpecOf(configuration: Configuration): string {
  return (
    configuration.model ?? harnessFacts(configuration.agent).defaultModel ?? configuration.agent
  );
}
