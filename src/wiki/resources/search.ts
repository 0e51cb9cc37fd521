/**
 * Resource search for online acquisition: backends that turn a targeted query into resources
 * to fetch. One versioned interface (`ResourceSearchBackendV1`); backends are registered by
 * kind (`registerSearchBackend`) and created from a validated configuration, so a new source is
 * a registration, not a branch in the acquisition.
 *
 * Built in:
 * - `github`, `search: "repositories"`: GitHub's REST search (`GET /search/repositories`); each
 *   hit is the repository, cloned at its default branch by the URL connector.
 * - `github`, `search: "code"`: `GET /search/code` (needs a token); each hit is one file of a
 *   repository at the commit GitHub names in the hit's `html_url`, cloned by the URL connector
 *   and read as a repository limited to that file.
 * - `json-endpoint`: any OpenSearch-style or JSON search endpoint, by URL template (variables
 *   below) and a JSON path to the result URLs in the answer.
 * - `folder`: a local folder of resources, ranked by BM25 against the query.
 *
 * Every request has a time limit and a size cap; an endpoint that is down, slow, rate-limited or
 * answers something that is not the promised JSON fails with a typed error naming the backend
 * and the request (never the token), and the acquisition records it and carries on.
 */
import { z } from "zod";
import { InputError } from "../../core/errors.js";

// Loading each backend module registers its kind (`registerSearchBackend` at its end).
export * from "./search-endpoint.js";
export * from "./search-folder.js";
export * from "./search-github.js";
export { DEFAULT_SEARCH_TIMEOUT_MS, getJson, MAX_SEARCH_ANSWER_BYTES } from "./search-http.js";
export * from "./search-registry.js";

// ------------------------------------------------------------------------------------------
// Backends named on the command line

/**
 * A `--search` value: `github` or `github:repositories`, `github:code`, `folder:<dir>`, or
 * `json:<url template>` (its results path comes from `resultsPath`, `--results-path`).
 */
export function backendConfigOf(
  spec: string,
  options: { resultsPath?: string; githubApiUrl?: string },
): Record<string, unknown> {
  if (spec === "github" || spec === "github:repositories")
    return {
      kind: "github",
      search: "repositories",
      ...(options.githubApiUrl === undefined ? {} : { apiUrl: options.githubApiUrl }),
    };
  if (spec === "github:code")
    return {
      kind: "github",
      search: "code",
      ...(options.githubApiUrl === undefined ? {} : { apiUrl: options.githubApiUrl }),
    };
  if (spec.startsWith("folder:")) return { kind: "folder", path: spec.slice("folder:".length) };
  if (spec.startsWith("json:")) {
    if (options.resultsPath === undefined)
      throw new InputError(
        "wiki.search-results-path",
        `${spec}: a JSON endpoint needs --results-path <JSON path to the result URLs>, e.g. '$.items[*].url'`,
        { field: "--search" },
      );
    return {
      kind: "json-endpoint",
      template: spec.slice("json:".length),
      results: options.resultsPath,
    };
  }
  throw new InputError(
    "wiki.search-spec",
    `${JSON.stringify(spec)}: expected github, github:code, folder:<dir> or json:<url template>`,
    { field: "--search" },
  );
}

/** `--search-config <file>`: `{"backends": [{"kind": …}, …]}`. */
export const searchConfigFileSchema = z.strictObject({
  backends: z.array(z.looseObject({ kind: z.string() })).min(1),
});
