/**
 * The wiki over MCP: list categories, list skills (paged cards), read one modality of a skill,
 * search (the two-stage selection), and `apply` backed by the per-domain capabilities. Served on
 * stdio, or on streamable HTTP bound to loopback and guarded by a bearer token.
 */
import { randomBytes, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";
import { packageVersion } from "../core/paths.js";
import type { ModelClient } from "../model/index.js";
import { applyCapability, type CapabilitiesManifest, loadCapabilities } from "./capabilities.js";
import { type CodeRunner, defaultCodeRunner } from "./gates.js";
import { modalityNames } from "./meta.js";
import { cardOf, searchSkills, WikiSearch } from "./search.js";
import { listDomains, readModality, readTaxonomy, readWikiManifest } from "./store.js";

export const MCP_PAGE_SIZE = 50;

export interface WikiServerState {
  readonly root: string;
  readonly search: WikiSearch;
  readonly capabilities: Map<string, CapabilitiesManifest>;
  readonly runner: CodeRunner;
  readonly model?: ModelClient;
}

/**
 * Load everything the server needs. Throws before serving anything when a capabilities
 * manifest declares an implementation that does not exist.
 */
export async function openWikiServer(
  root: string,
  options: { model?: ModelClient; runner?: CodeRunner } = {},
): Promise<WikiServerState> {
  await readWikiManifest(root);
  const capabilities = await loadCapabilities(root);
  const search = await WikiSearch.open(root);
  const runner = options.runner ?? (await defaultCodeRunner());
  return {
    root,
    search,
    capabilities,
    runner,
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
  const server = new McpServer({ name: "skillsmith-wiki", version: packageVersion() });
  const byId = new Map(state.search.entries.map((entry) => [entry.meta.skill_id, entry]));

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

  server.registerTool(
    "read_skill",
    {
      description:
        "Read one modality of a skill: text (overview), code, visual (images), meta or source (provenance).",
      inputSchema: { skill_id: z.string(), modality: z.enum([...modalityNames, "meta", "source"]) },
    },
    async ({ skill_id, modality }) => {
      const entry = byId.get(skill_id);
      if (entry === undefined) return failure(`no skill ${skill_id}`);
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

  server.registerTool(
    "search",
    {
      description:
        "Find skills for a task: BM25 shortlist (K=20) over name, tags, applicability and category, then (select=true, needs a model) a model picks at most 5 with a reason each.",
      inputSchema: {
        query: z.string().min(1),
        select: z.boolean().optional(),
        include_unverified: z.boolean().optional(),
      },
    },
    async ({ query, select, include_unverified }) => {
      if (select === true && state.model === undefined)
        return failure("selection needs a model: start the server with --model <spec>");
      const result = await searchSkills(state.search, query, {
        strategy: select === true ? "select" : "bm25-only",
        ...(state.model === undefined ? {} : { model: state.model }),
        ...(include_unverified === undefined ? {} : { includeUnverified: include_unverified }),
      });
      return json(result);
    },
  );

  server.registerTool(
    "apply",
    {
      description:
        "Apply a skill through one of its domain's capabilities (see capabilities.json of the domain). A capability the domain lacks gives a structured not-applicable result.",
      inputSchema: {
        skill_id: z.string(),
        capability: z.string(),
        input: z.record(z.string(), z.unknown()).optional(),
      },
    },
    async ({ skill_id, capability, input }) => {
      const entry = byId.get(skill_id);
      if (entry === undefined) return failure(`no skill ${skill_id}`);
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
  return server;
}

/** Serve on this process's stdin/stdout until the client closes the stream. */
export async function serveWikiStdio(state: WikiServerState): Promise<void> {
  const server = createWikiMcpServer(state);
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    process.stdin.once("end", () => resolve());
  });
  await server.connect(transport);
  await closed;
  await server.close();
}

export interface HttpWikiServer {
  readonly url: string;
  readonly token: string;
  close(): Promise<void>;
}

function tokenMatches(header: string | undefined, token: string): boolean {
  const presented = Buffer.from(header?.startsWith("Bearer ") === true ? header.slice(7) : "");
  const expected = Buffer.from(token);
  return presented.length === expected.length && timingSafeEqual(presented, expected);
}

/** Streamable HTTP (stateless) on 127.0.0.1, every request checked for the bearer token. */
export async function serveWikiHttp(
  state: WikiServerState,
  options: { port?: number; token?: string } = {},
): Promise<HttpWikiServer> {
  const token = options.token ?? randomBytes(24).toString("base64url");
  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    if (!tokenMatches(request.headers.authorization, token)) {
      response
        .writeHead(401, { "content-type": "application/json", "www-authenticate": "Bearer" })
        .end('{"error":"missing or wrong bearer token"}');
      return;
    }
    if (new URL(request.url ?? "/", "http://127.0.0.1").pathname !== "/mcp") {
      response.writeHead(404).end();
      return;
    }
    const server = createWikiMcpServer(state);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    response.on("close", () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(request, response);
  };
  const http: Server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent) response.writeHead(500, { "content-type": "text/plain" });
      response.end(error instanceof Error ? error.message : String(error));
    });
  });
  await new Promise<void>((resolve, reject) => {
    http.once("error", reject);
    http.listen(options.port ?? 0, "127.0.0.1", () => resolve());
  });
  const address = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${address.port}/mcp`,
    token,
    close: () => new Promise<void>((resolve) => http.close(() => resolve())),
  };
}
