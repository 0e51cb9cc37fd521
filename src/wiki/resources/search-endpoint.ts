import { z } from "zod";
import { InputError } from "../../core/errors.js";
import { registerSecret } from "../../model/redact.js";
import { resourceTypes } from "../meta.js";
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

/**
 * Template variables (OpenSearch 1.1 names, plus three of ours), each URL-encoded when filled:
 * `{searchTerms}` the query's words; `{count}` how many results are wanted; `{startIndex}` 1;
 * `{startPage}` 1; `{language}` `*`; `{inputEncoding}` and `{outputEncoding}` `UTF-8`;
 * `{domain}` the wiki domain; `{task}` the whole task text; `{apiKey}` the value of the
 * environment variable `apiKeyVariable` names (never recorded: records show `{apiKey}`).
 * A trailing `?` (`{count?}`) marks an optional variable and is accepted.
 */
export const TEMPLATE_VARIABLES = [
  "searchTerms",
  "count",
  "startIndex",
  "startPage",
  "language",
  "inputEncoding",
  "outputEncoding",
  "domain",
  "task",
  "apiKey",
] as const;
type TemplateVariable = (typeof TEMPLATE_VARIABLES)[number];
const TEMPLATE_VARIABLE = /\{([A-Za-z]+)\??\}/g;

function checkTemplate(template: string): string | undefined {
  let url: URL;
  try {
    url = new URL(template.replace(TEMPLATE_VARIABLE, "x"));
  } catch {
    // The parse failure is the finding: the caller reports this message naming the field.
    return "is not a URL once its variables are filled";
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    return `must be an http or https URL, not ${url.protocol}`;
  const variables = [...template.matchAll(TEMPLATE_VARIABLE)].map((match) => match[1] ?? "");
  const unknown = variables.filter(
    (name) => !(TEMPLATE_VARIABLES as readonly string[]).includes(name),
  );
  if (unknown.length > 0)
    return `has unknown variable${unknown.length === 1 ? "" : "s"} ${unknown.map((name) => `{${name}}`).join(", ")}; known: ${TEMPLATE_VARIABLES.map((name) => `{${name}}`).join(", ")}`;
  if (!variables.includes("searchTerms") && !variables.includes("task"))
    return "has neither {searchTerms} nor {task}, so the query would not reach the endpoint";
  return undefined;
}

export function fillTemplate(
  template: string,
  values: Readonly<Record<TemplateVariable, string>>,
): string {
  return template.replace(TEMPLATE_VARIABLE, (_, name: string) =>
    encodeURIComponent(values[name as TemplateVariable] ?? ""),
  );
}

/** One step of a JSON path: a key, an index, or every element / member (`*`). */
type PathStep = { key: string } | { index: number } | { all: true };

/**
 * A JSON path in the common subset: `$`, `.key`, `['key']` / `["key"]`, `[n]`, `[*]` and `.*`.
 * Examples: `$.items[*].link`, `$.data.results[*].url`, `$[3][*]` (the URLs of an OpenSearch
 * suggestions answer, `[query, [terms], [descriptions], [urls]]`).
 */
export function parseJsonPath(path: string): PathStep[] | string {
  if (!path.startsWith("$")) return 'must start with "$"';
  const patterns: readonly [RegExp, (match: RegExpExecArray) => PathStep][] = [
    [/^\.([A-Za-z_$][\w$-]*)/, (match) => ({ key: match[1] ?? "" })],
    [/^(?:\.\*|\[\*\])/, () => ({ all: true })],
    [/^\[(\d+)\]/, (match) => ({ index: Number(match[1]) })],
    [/^\[(['"])((?:(?!\1).)*)\1\]/, (match) => ({ key: match[2] ?? "" })],
  ];
  const steps: PathStep[] = [];
  let rest = path.slice(1);
  while (rest !== "") {
    let matched: RegExpExecArray | undefined;
    for (const [pattern, step] of patterns) {
      const match = pattern.exec(rest);
      if (match === null) continue;
      steps.push(step(match));
      matched = match;
      break;
    }
    if (matched === undefined) return `cannot read ${JSON.stringify(rest.slice(0, 20))}`;
    rest = rest.slice(matched[0].length);
  }
  return steps;
}

/**
 * The values a path selects. A key or index missing along the way is reported (with what was
 * there instead), so a wrong path reads as a wrong path, not as "no results".
 */
export function selectJsonPath(
  value: unknown,
  steps: readonly PathStep[],
): { values: unknown[] } | { missing: string } {
  let current: { value: unknown; at: string }[] = [{ value, at: "$" }];
  for (const step of steps) {
    const next: { value: unknown; at: string }[] = [];
    for (const { value: node, at } of current) {
      if ("all" in step) {
        if (Array.isArray(node))
          for (const [index, each] of node.entries())
            next.push({ value: each, at: `${at}[${index}]` });
        else if (typeof node === "object" && node !== null)
          for (const [key, each] of Object.entries(node))
            next.push({ value: each, at: `${at}.${key}` });
        else return { missing: `${at} is ${describe(node)}, not an array or object` };
      } else if ("index" in step) {
        if (!Array.isArray(node)) return { missing: `${at} is ${describe(node)}, not an array` };
        if (step.index < node.length)
          next.push({ value: node[step.index], at: `${at}[${step.index}]` });
        else return { missing: `${at} has ${node.length} elements, no [${step.index}]` };
      } else {
        if (typeof node !== "object" || node === null || Array.isArray(node))
          return { missing: `${at} is ${describe(node)}, not an object with "${step.key}"` };
        if (!(step.key in node))
          return {
            missing: `${at} has no "${step.key}" (it has ${
              Object.keys(node)
                .slice(0, 8)
                .map((key) => `"${key}"`)
                .join(", ") || "no keys"
            })`,
          };
        next.push({ value: (node as Record<string, unknown>)[step.key], at: `${at}.${step.key}` });
      }
    }
    current = next;
  }
  return { values: current.map((each) => each.value) };
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

const endpointConfigSchema = z.strictObject({
  kind: z.literal("json-endpoint"),
  /** A short name for records and messages (default: the template's host). */
  name: z.string().min(1).max(64).optional(),
  /** The request URL with variables, e.g. `https://search.example/api?q={searchTerms}&n={count}`. */
  template: z.string().superRefine((template, context) => {
    const problem = checkTemplate(template);
    if (problem !== undefined) context.addIssue({ code: "custom", message: `template ${problem}` });
  }),
  /** JSON path to the result URLs (strings) in the answer, e.g. `$.items[*].link`. */
  results: z.string().superRefine((path, context) => {
    const parsed = parseJsonPath(path);
    if (typeof parsed === "string")
      context.addIssue({
        code: "custom",
        message: `results path ${JSON.stringify(path)} ${parsed}`,
      });
  }),
  /** The resource type of every result (default: told by each URL and its Content-Type). */
  type: z.enum(resourceTypes).optional(),
  /** The environment variable whose value fills `{apiKey}`. */
  apiKeyVariable: z.string().min(1).optional(),
});
type EndpointConfig = z.infer<typeof endpointConfigSchema>;

class JsonEndpointBackend implements ResourceSearchBackendV1 {
  readonly specificationVersion = "v1" as const;
  readonly kind = "json-endpoint";
  readonly name: string;
  private readonly steps: PathStep[];
  private readonly apiKey: string;

  constructor(
    private readonly config: EndpointConfig,
    environment: BackendEnvironment,
  ) {
    this.name = `json:${config.name ?? new URL(config.template.replace(TEMPLATE_VARIABLE, "x")).host}`;
    this.steps = parseJsonPath(config.results) as PathStep[];
    const usesKey = /\{apiKey\??\}/.test(config.template);
    const key =
      config.apiKeyVariable === undefined ? undefined : environment.env[config.apiKeyVariable];
    if (usesKey && (key === undefined || key === ""))
      throw new InputError(
        "wiki.search-api-key",
        config.apiKeyVariable === undefined
          ? "the template uses {apiKey}: name the environment variable holding it in apiKeyVariable"
          : `the template uses {apiKey}, but ${config.apiKeyVariable} is not set`,
        environment.where,
      );
    this.apiKey = key ?? "";
    registerSecret(key);
  }

  async search(query: TargetedQuery, limit: number, context: SearchContext): Promise<SearchAnswer> {
    const values = {
      searchTerms: query.text,
      count: String(limit),
      startIndex: "1",
      startPage: "1",
      language: "*",
      inputEncoding: "UTF-8",
      outputEncoding: "UTF-8",
      domain: query.domain,
      task: query.task,
      apiKey: this.apiKey,
    };
    const url = fillTemplate(this.config.template, values);
    const shown = fillTemplate(this.config.template.replace(/\{apiKey\??\}/g, "\u0000"), {
      ...values,
      apiKey: "",
    }).replaceAll("%00", "{apiKey}");
    const { value } = await getJson(url, {
      backend: this.name,
      shown,
      timeoutMs: context.timeoutMs,
      ...(context.signal === undefined ? {} : { signal: context.signal }),
    });
    const selected = selectJsonPath(value, this.steps);
    if ("missing" in selected)
      throw invalidAnswer(
        this.name,
        shown,
        `the results path ${this.config.results} does not match the answer: ${selected.missing}`,
      );
    const hits: SearchHit[] = [];
    for (const [index, each] of selected.values.entries()) {
      if (typeof each !== "string")
        throw invalidAnswer(
          this.name,
          shown,
          `result ${index} of ${this.config.results} is ${describe(each)}, not a URL string`,
        );
      if (hits.length < limit)
        hits.push({
          kind: "url",
          url: each,
          ...(this.config.type === undefined ? {} : { type: this.config.type }),
        });
    }
    return { request: `GET ${shown}`, total: selected.values.length, hits };
  }
}

registerSearchBackend("json-endpoint", {
  schema: endpointConfigSchema,
  create: (config, environment) => new JsonEndpointBackend(config, environment),
});
