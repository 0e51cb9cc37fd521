/**
 * The wiki over MCP: list categories, list skills (paged cards), read one modality of a skill,
 * search (the BM25 shortlist with scores and a relevance threshold, or the two-stage selection),
 * and `apply` backed by the per-domain capabilities. The verified entries are also served the
 * standard way, by the MCP Skills extension (SEP-2640): each exported as an Agent Skills folder
 * under `skill://<domain>/<name>/`. Served on stdio, or on streamable HTTP bound to loopback and
 * guarded by a bearer token.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { packageVersion } from "../core/paths.js";
import type { ModelClient } from "../model/index.js";
import { mcpServerModule } from "../skill/mcp-sdk.js";
import { type HttpMcpServer, serveMcpHttp, serveMcpStdio } from "../skill/mcp-server.js";
import {
  isServedSkill,
  loadServedSkill,
  registerSkillsExtension,
  type ServedSkill,
  type SkippedSkill,
} from "../skill/mcp-skills.js";
import { applyCapability, type CapabilitiesManifest, loadCapabilities } from "./capabilities.js";
import { exportEntry } from "./export.js";
import { type CodeRunner, defaultCodeRunner, OUTPUT_LIMIT } from "./gates.js";
import { modalityNames } from "./meta.js";
import { cardOf, searchSkills, WikiSearch } from "./search.js";
import {
  listDomains,
  matchIdPrefix,
  readModality,
  readTaxonomy,
  readWikiManifest,
} from "./store.js";

export const MCP_PAGE_SIZE = 50;

/**
 * The BM25 score a shortlist hit needs to count as a candidate for the task. The same default as
 * `wiki search --online --min-score`: on the example wiki a matching query scores 5 or more, a
 * query sharing one common word with a card scores below 2.
 */
export const DEFAULT_MIN_SCORE = 2;

export interface WikiServerState {
  readonly root: string;
  readonly search: WikiSearch;
  readonly capabilities: Map<string, CapabilitiesManifest>;
  readonly runner: CodeRunner;
  readonly model?: ModelClient;
  /** The verified entries as Agent Skills, served by the Skills extension. */
  readonly skills: readonly ServedSkill[];
  /** Entries that could not be served as skills, and why. */
  readonly skippedSkills: readonly SkippedSkill[];
  readonly minScore: number;
}

/**
 * Every verified entry exported as an Agent Skills folder (what `wiki export` writes), read into
 * memory under `<domain>/<name>`; a second entry with the same exported name goes under
 * `<domain>/<first 12 characters of its id>/<name>`.
 */
async function servedWikiSkills(
  search: WikiSearch,
): Promise<{ skills: ServedSkill[]; skipped: SkippedSkill[] }> {
  const scratch = await mkdtemp(join(tmpdir(), "skillsmith-wiki-skills-"));
  const skills: ServedSkill[] = [];
  const skipped: SkippedSkill[] = [];
  try {
    for (const entry of search.eligible(false)) {
      const parent = join(scratch, entry.meta.skill_id);
      const exported = await exportEntry(entry, parent).catch((error: unknown) => error as Error);
      if (exported instanceof Error || !exported.validation.valid) {
        skipped.push({
          path: entry.dir,
          reason: exported instanceof Error ? exported.message : "the exported skill is invalid",
        });
        continue;
      }
      const taken = skills.some(
        (skill) => skill.skillPath === `${entry.meta.domain}/${exported.name}`,
      );
      const skillPath = taken
        ? `${entry.meta.domain}/${entry.meta.skill_id.slice(0, 12)}/${exported.name}`
        : `${entry.meta.domain}/${exported.name}`;
      const loaded = await loadServedSkill(exported.dir, skillPath);
      if (isServedSkill(loaded)) skills.push(loaded);
      else skipped.push({ path: entry.dir, reason: loaded.reason });
    }
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
  return { skills, skipped };
}

/**
 * Load everything the server needs. Throws before serving anything when a capabilities
 * manifest declares an implementation that does not exist.
 */
export async function openWikiServer(
  root: string,
  options: { model?: ModelClient; runner?: CodeRunner; minScore?: number } = {},
): Promise<WikiServerState> {
  await readWikiManifest(root);
  const capabilities = await loadCapabilities(root);
  const search = await WikiSearch.open(root);
  const runner = options.runner ?? (await defaultCodeRunner());
  const served = await servedWikiSkills(search);
  return {
    root,
    search,
    capabilities,
    runner,
    skills: served.skills,
    skippedSkills: served.skipped,
    minScore: options.minScore ?? DEFAULT_MIN_SCORE,
    ...(options.model === undefined ? {} : { model: options.model }),
  };
}

function json(value: unknown) {
  return {
    content: [{ type: "text" as const, text: JSON.stringify(value, null, 2) }],
    structuredContent: value as Record<string, unknown>,
  };
}

function failure(message: string) {
  return { content: [{ type: "text" as const, text: message }], isError: true };
}

/** A fresh MCP server over the shared state (one per HTTP request in stateless mode). */
export function createWikiMcpServer(state: WikiServerState): McpServer {
  const { McpServer } = mcpServerModule();
  const server = new McpServer({ name: "skillsmith-wiki", version: packageVersion() });
  registerSkillsExtension(server, state.skills);
  const lookup = entryLookup(state);
  registerBrowseTools(server, state);
  registerReadTool(server, lookup);
  registerSearchTool(server, state);
  registerApplyTool(server, state, lookup);
  return server;
}

/**
 * The entry a tool's `skill_id` names: a full id, or a prefix naming one entry (the CLI prints 12
 * digits); else the failure to answer with.
 */
type EntryLookup = (
  skillId: string,
) => { entry: WikiServerState["search"]["entries"][number] } | { failure: string };

function entryLookup(state: WikiServerState): EntryLookup {
  const byId = new Map(state.search.entries.map((entry) => [entry.meta.skill_id, entry]));
  return (skillId) => {
    const match = matchIdPrefix(byId.keys(), skillId);
    if (match.kind === "ambiguous")
      return {
        failure: `"${skillId}" is the start of ${match.ids.length} skill ids: ${match.ids.slice(0, 10).join(", ")}; give more digits`,
      };
    const entry = match.kind === "one" ? byId.get(match.id) : undefined;
    return entry === undefined ? { failure: `no skill ${skillId}` } : { entry };
  };
}

function registerBrowseTools(server: McpServer, state: WikiServerState): void {
  server.registerTool(
    "list_categories",
    {
      description: "The wiki's domains and their category trees (1–3 levels) with skill counts.",
      inputSchema: { domain: z.string().optional() },
    },
    async ({ domain }) => {
      const domains = domain === undefined ? await listDomains(state.root) : [domain];
      const result = [];
      for (const each of domains) result.push(await readTaxonomy(state.root, each));
      return json({ domains: result });
    },
  );

  server.registerTool(
    "list_skills",
    {
      description: `Metadata cards of the wiki's skills, ${MCP_PAGE_SIZE} per page; filter by domain and category prefix. Verified skills only unless include_unverified.`,
      inputSchema: {
        domain: z.string().optional(),
        category: z.string().optional().describe("category path prefix, levels joined by '/'"),
        include_unverified: z.boolean().optional(),
        cursor: z.string().optional().describe("next_cursor of the previous page"),
      },
    },
    async ({ domain, category, include_unverified, cursor }) => {
      const offset = cursor === undefined ? 0 : Number.parseInt(cursor, 10);
      if (!Number.isInteger(offset) || offset < 0) return failure(`invalid cursor "${cursor}"`);
      const prefix = category === undefined || category === "" ? [] : category.split("/");
      const matching = state.search
        .eligible(include_unverified === true)
        .filter((entry) => domain === undefined || entry.meta.domain === domain)
        .filter((entry) =>
          prefix.every((level, index) => entry.meta.category_path[index] === level),
        );
      const page = matching
        .slice(offset, offset + MCP_PAGE_SIZE)
        .map((entry) => cardOf(entry.meta));
      const next = offset + MCP_PAGE_SIZE < matching.length ? String(offset + MCP_PAGE_SIZE) : null;
      return json({ total: matching.length, skills: page, next_cursor: next });
    },
  );
}

function registerReadTool(server: McpServer, lookup: EntryLookup): void {
  server.registerTool(
    "read_skill",
    {
      description:
        "Read one modality of a skill: text (overview), code, visual (images), meta or source (provenance).",
      inputSchema: { skill_id: z.string(), modality: z.enum([...modalityNames, "meta", "source"]) },
    },
    async ({ skill_id, modality }) => {
      const found = lookup(skill_id);
      if ("failure" in found) return failure(found.failure);
      const { entry } = found;
      if (modality === "meta") return json(entry.meta);
      if (modality === "source") {
        return json({ provenance: entry.meta.provenance });
      }
      const files = await readModality(entry, modality);
      if (files.length === 0)
        return json({
          skill_id,
          modality,
          files: [],
          note: `the skill has no ${modality} modality`,
        });
      if (modality === "visual") {
        return {
          content: files.flatMap((file) => [
            { type: "text" as const, text: file.path },
            {
              type: "image" as const,
              data: file.data.toString("base64"),
              mimeType: file.path.endsWith(".png") ? "image/png" : "image/jpeg",
            },
          ]),
        };
      }
      return json({
        skill_id,
        modality,
        files: files.map((file) => ({ path: file.path, text: file.data.toString("utf8") })),
      });
    },
  );
}

function registerSearchTool(server: McpServer, state: WikiServerState): void {
  server.registerTool(
    "search",
    {
      description: `Find skills for a task. BM25 over name, tags, applicability and category gives a shortlist (K=20) with a score per card; only cards scoring at least min_score (default ${state.minScore}) are candidates, and with none the answer is an empty list, not the nearest misses. select=true (needs a model) lets a model pick at most 5 of the candidates with a reason each.`,
      inputSchema: {
        query: z.string().min(1),
        select: z.boolean().optional(),
        include_unverified: z.boolean().optional(),
        min_score: z.number().min(0).optional().describe("BM25 score a card needs to count"),
      },
    },
    async ({ query, select, include_unverified, min_score }) => {
      if (select === true && state.model === undefined)
        return failure("selection needs a model: start the server with --model <spec>");
      const threshold = min_score ?? state.minScore;
      const result = await searchSkills(state.search, query, {
        strategy: select === true ? "select" : "bm25-only",
        ...(state.model === undefined ? {} : { model: state.model }),
        ...(include_unverified === undefined ? {} : { includeUnverified: include_unverified }),
      });
      const candidates = result.shortlist.filter((hit) => hit.score >= threshold);
      const scoreOf = new Map(result.shortlist.map((hit) => [hit.card.skill_id, hit.score]));
      const max = state.search.thresholds.select_max;
      const selected =
        select === true
          ? result.selected.map((pick) => ({
              ...pick,
              score: scoreOf.get(pick.card.skill_id) ?? 0,
              above_threshold: (scoreOf.get(pick.card.skill_id) ?? 0) >= threshold,
            }))
          : candidates.slice(0, max).map((hit) => ({
              card: hit.card,
              score: hit.score,
              reason: `BM25 score ${hit.score.toFixed(3)} ≥ ${threshold}`,
            }));
      const best = result.shortlist[0]?.score ?? 0;
      return json({
        query,
        strategy: result.strategy,
        threshold: { min_score: threshold, scoring: "BM25 (k1, b from the wiki's thresholds)" },
        best_score: best,
        shortlist: candidates,
        below_threshold: result.shortlist.length - candidates.length,
        selected,
        rejected_ids: result.rejected_ids,
        ...(candidates.length === 0
          ? {
              note:
                result.shortlist.length === 0
                  ? "no skill shares a word with the query"
                  : `no skill fits: the best score is ${best.toFixed(3)}, below the threshold ${threshold}`,
            }
          : {}),
      });
    },
  );
}

function registerApplyTool(server: McpServer, state: WikiServerState, lookup: EntryLookup): void {
  server.registerTool(
    "apply",
    {
      description: `Apply a skill through one of its domain's capabilities (see capabilities.json of the domain). A capability the domain lacks gives a structured not-applicable result. A capability implemented by builtin:run-code runs the skill's verified code in the sandbox with input.stdin as its standard input and returns {status, detail, stdout, stderr}, each stream cut at ${OUTPUT_LIMIT} characters; builtin:instructions takes no input and returns the overview.`,
      inputSchema: {
        skill_id: z.string(),
        capability: z.string(),
        input: z
          .object({
            stdin: z
              .string()
              .optional()
              .describe("builtin:run-code: the program's standard input (default empty)"),
          })
          .catchall(z.unknown())
          .optional()
          .describe("the capability's input; its keys depend on the capability's implementation"),
      },
    },
    async ({ skill_id, capability, input }) => {
      const found = lookup(skill_id);
      if ("failure" in found) return failure(found.failure);
      const { entry } = found;
      const limits = {
        timeoutMs: state.search.thresholds.exec_timeout_ms,
        memoryBytes: state.search.thresholds.exec_memory_bytes,
      };
      return json(
        await applyCapability(entry, capability, input ?? {}, state.capabilities, {
          runner: state.runner,
          limits,
        }),
      );
    },
  );
}

/** Serve on this process's stdin/stdout until the client closes the stream. */
export async function serveWikiStdio(state: WikiServerState): Promise<void> {
  await serveMcpStdio(() => createWikiMcpServer(state));
}

export type HttpWikiServer = HttpMcpServer;

/** Streamable HTTP (stateless) on 127.0.0.1, every request checked for the bearer token. */
export async function serveWikiHttp(
  state: WikiServerState,
  options: { port?: number; token?: string } = {},
): Promise<HttpWikiServer> {
  return serveMcpHttp(() => createWikiMcpServer(state), options);
}
