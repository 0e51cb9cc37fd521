import { z } from "zod";
import { InputError } from "../../core/errors.js";
import { type ParseProblem, parseResult } from "../../core/parse.js";
import { registerSecret } from "../../model/redact.js";
import {
  GITHUB_API_URL,
  GITHUB_API_URL_VARIABLE,
  GITHUB_TOKEN_VARIABLE,
} from "../online-constants.js";
import type { TargetedQuery } from "./query.js";
import { getJson, invalidAnswer } from "./search-http.js";
import {
  type BackendEnvironment,
  type ResourceSearchBackendV1,
  registerSearchBackend,
  type SearchAnswer,
  type SearchContext,
  type SearchHit,
} from "./search-registry.js";

export { GITHUB_API_URL, GITHUB_API_URL_VARIABLE, GITHUB_TOKEN_VARIABLE };

const githubConfigSchema = z.strictObject({
  kind: z.literal("github"),
  search: z.enum(["repositories", "code"]).default("repositories"),
  /** REST API base URL (GitHub Enterprise, a test server); default GITHUB_API_URL, then api.github.com. */
  apiUrl: z.url().optional(),
  /** The environment variable holding the token (default GITHUB_TOKEN). */
  tokenVariable: z.string().min(1).default(GITHUB_TOKEN_VARIABLE),
  /** Search qualifiers appended to the terms, e.g. `language:css stars:>50`. */
  qualifiers: z.string().max(200).optional(),
});
type GithubConfig = z.infer<typeof githubConfigSchema>;

const githubLicenceSchema = z
  .object({ spdx_id: z.string().nullable().optional() })
  .nullable()
  .optional();
const repositoryHitSchema = z.object({
  full_name: z.string(),
  html_url: z.string(),
  clone_url: z.string().optional(),
  default_branch: z.string().optional(),
  description: z.string().nullable().optional(),
  license: githubLicenceSchema,
});
const codeHitSchema = z.object({
  name: z.string(),
  path: z.string(),
  html_url: z.string(),
  url: z.string().optional(),
  repository: z.object({
    full_name: z.string(),
    html_url: z.string(),
    clone_url: z.string().optional(),
  }),
});
const searchPageSchema = (item: z.ZodType) =>
  z.object({
    total_count: z.number().int().nonnegative(),
    incomplete_results: z.boolean().optional(),
    items: z.array(item),
  });

function spdxOf(licence: z.infer<typeof githubLicenceSchema>): string | undefined {
  const id = licence?.spdx_id ?? undefined;
  return id === undefined || id === null || id === "NOASSERTION" ? undefined : id;
}

/** `…/<owner>/<repo>/blob/<ref>/<path>` → ref and path (decoded). */
export function blobLocation(htmlUrl: string): { ref: string; path: string } | undefined {
  let url: URL;
  try {
    url = new URL(htmlUrl);
  } catch {
    // Not a URL at all: the caller skips the hit, as for any other URL that is not a blob.
    return undefined;
  }
  const segments = url.pathname.split("/");
  const blob = segments.indexOf("blob");
  if (blob < 0 || blob + 2 >= segments.length) return undefined;
  try {
    return {
      ref: decodeURIComponent(segments[blob + 1] ?? ""),
      path: segments
        .slice(blob + 2)
        .map((segment) => decodeURIComponent(segment))
        .join("/"),
    };
  } catch {
    // A malformed percent escape names no file: skipped like any other non-blob URL.
    return undefined;
  }
}

class GithubSearchBackend implements ResourceSearchBackendV1 {
  readonly specificationVersion = "v1" as const;
  readonly kind = "github";
  readonly name: string;
  private readonly apiUrl: string;
  private readonly token: string | undefined;

  constructor(
    private readonly config: GithubConfig,
    environment: BackendEnvironment,
  ) {
    this.apiUrl = (
      config.apiUrl ??
      environment.env[GITHUB_API_URL_VARIABLE] ??
      GITHUB_API_URL
    ).replace(/\/+$/, "");
    const token = environment.env[config.tokenVariable];
    this.token = token === undefined || token.trim() === "" ? undefined : token.trim();
    // Whatever variable holds it, the token is a known secret for every store from now on.
    registerSecret(this.token);
    this.name = `github:${config.search}${this.apiUrl === GITHUB_API_URL ? "" : `@${this.apiUrl}`}`;
    // GitHub answers code search only to authenticated requests: say so before any search.
    if (config.search === "code" && this.token === undefined)
      throw new InputError(
        "wiki.search-github-token",
        `GitHub code search needs a token: set ${config.tokenVariable} (a fine-grained token with read access to public repositories is enough)`,
        environment.where,
      );
  }

  async search(query: TargetedQuery, limit: number, context: SearchContext): Promise<SearchAnswer> {
    const q = [query.text, this.config.qualifiers ?? ""].filter((part) => part !== "").join(" ");
    const perPage = Math.min(100, Math.max(1, limit));
    const shown = `${this.apiUrl}/search/${this.config.search}?q=${encodeURIComponent(q)}&per_page=${perPage}`;
    const { value } = await getJson(shown, {
      backend: this.name,
      shown,
      timeoutMs: context.timeoutMs,
      ...(context.signal === undefined ? {} : { signal: context.signal }),
      headers: {
        accept: "application/vnd.github+json",
        "x-github-api-version": "2022-11-28",
        ...(this.token === undefined ? {} : { authorization: `Bearer ${this.token}` }),
      },
    });
    const request = `GET ${shown}`;
    if (this.config.search === "repositories") {
      const page = parseResult(searchPageSchema(repositoryHitSchema), value);
      if (!page.ok)
        throw invalidAnswer(this.name, shown, `not a GitHub search answer (${where(page.error)})`);
      const items = page.value.items as z.infer<typeof repositoryHitSchema>[];
      return {
        request,
        total: page.value.total_count,
        hits: items.slice(0, limit).map((item) => {
          const licence = spdxOf(item.license);
          return {
            kind: "url" as const,
            url: item.clone_url ?? `${item.html_url.replace(/\/+$/, "")}.git`,
            ...(item.default_branch === undefined ? {} : { ref: item.default_branch }),
            type: "repository" as const,
            title: item.description ? `${item.full_name}: ${item.description}` : item.full_name,
            ...(licence === undefined ? {} : { licence }),
          };
        }),
      };
    }
    const page = parseResult(searchPageSchema(codeHitSchema), value);
    if (!page.ok)
      throw invalidAnswer(
        this.name,
        shown,
        `not a GitHub code search answer (${where(page.error)})`,
      );
    const hits: SearchHit[] = [];
    for (const item of page.value.items as z.infer<typeof codeHitSchema>[]) {
      if (hits.length >= limit) break;
      const location = blobLocation(item.html_url);
      const ref =
        location?.ref ??
        (item.url === undefined
          ? undefined
          : (new URL(item.url).searchParams.get("ref") ?? undefined));
      // Without a readable commit the default branch is cloned; the file is checked there.
      const cloneUrl =
        item.repository.clone_url ?? `${item.repository.html_url.replace(/\/+$/, "")}.git`;
      hits.push({
        kind: "url",
        url: cloneUrl,
        ...(ref === undefined || ref === "" ? {} : { ref }),
        type: "repository",
        files: [location?.path ?? item.path],
        manifestPath: item.html_url,
        title: `${item.repository.full_name}: ${item.path}`,
      });
    }
    return { request, total: page.value.total_count, hits };
  }
}

registerSearchBackend("github", {
  schema: githubConfigSchema,
  create: (config, environment) => new GithubSearchBackend(config, environment),
});

/** What an answer of the wrong shape got wrong, and where. */
function where(problem: ParseProblem): string {
  return `${problem.message} at ${problem.field ?? "the top"}`;
}
