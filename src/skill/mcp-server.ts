/**
 * `skill serve-mcp`: skill folders served over MCP by the Skills extension, on stdio or on
 * streamable HTTP bound to loopback and guarded by a bearer token. The transports are shared with
 * the wiki's server (`src/wiki/mcp.ts`).
 */
import { randomBytes, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { basename } from "node:path";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { packageVersion } from "../core/paths.js";
import { auditSkillFolder } from "./audit.js";
import { auditFails } from "./baseline.js";
import { mcpServerModule, mcpStdioModule, mcpStreamableHttpModule } from "./mcp-sdk.js";
import {
  isServedSkill,
  loadServedSkill,
  registerSkillsExtension,
  type ServedSkill,
  type SkippedSkill,
} from "./mcp-skills.js";
import type { AuditSeverity } from "./types.js";
import { validateSkillFolder } from "./validate.js";

export interface SkillsToServe {
  readonly skills: ServedSkill[];
  readonly skipped: SkippedSkill[];
}

/**
 * Load skill folders to serve: each must be valid and pass its audit (at `failOn`, default
 * high) unless `allowFindings`, fit the extension's limits, and have a name no other served
 * skill has (a host must not be handed two skills at one URI).
 */
export async function loadSkillsToServe(
  folders: readonly string[],
  options: { failOn?: AuditSeverity; allowFindings?: boolean } = {},
): Promise<SkillsToServe> {
  const skills: ServedSkill[] = [];
  const skipped: SkippedSkill[] = [];
  for (const folder of folders) {
    const validation = await validateSkillFolder(folder);
    if (!validation.valid) {
      skipped.push({
        path: folder,
        reason: `invalid: ${validation.errors.map((error) => error.code).join(", ")}`,
      });
      continue;
    }
    if (options.allowFindings !== true) {
      const audit = await auditSkillFolder(folder);
      if (auditFails(audit, options.failOn ?? "high")) {
        skipped.push({
          path: folder,
          reason: `the audit fails: ${[...new Set(audit.findings.map((finding) => finding.code))].join(", ")}`,
        });
        continue;
      }
    }
    const loaded = await loadServedSkill(folder, basename(folder));
    if (!isServedSkill(loaded)) {
      skipped.push(loaded);
      continue;
    }
    if (skills.some((skill) => skill.skillPath === loaded.skillPath)) {
      skipped.push({
        path: folder,
        reason: `another skill is already served as ${loaded.skillPath}`,
      });
      continue;
    }
    skills.push(loaded);
  }
  return { skills, skipped };
}

/** A fresh MCP server serving `skills` (one per HTTP request in stateless mode). */
export function createSkillsMcpServer(skills: readonly ServedSkill[]): McpServer {
  const { McpServer } = mcpServerModule();
  const server = new McpServer(
    { name: "skillsmith-skills", version: packageVersion() },
    {
      instructions:
        "Agent Skills served by the MCP Skills extension (io.modelcontextprotocol/skills): skills/list, skills/get, resources/read of skill:// URIs, resources/directory/read.",
    },
  );
  registerSkillsExtension(server, skills);
  return server;
}

/** Serve on this process's stdin/stdout until the client closes the stream. */
export async function serveMcpStdio(factory: () => McpServer): Promise<void> {
  const server = factory();
  const transport = new (mcpStdioModule().StdioServerTransport)();
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    process.stdin.once("end", () => resolve());
  });
  await server.connect(transport);
  await closed;
  await server.close();
}

export interface HttpMcpServer {
  readonly url: string;
  readonly token: string;
  close(): Promise<void>;
}

function tokenMatches(header: string | undefined, token: string): boolean {
  const presented = Buffer.from(header?.startsWith("Bearer ") === true ? header.slice(7) : "");
  const expected = Buffer.from(token);
  return presented.length === expected.length && timingSafeEqual(presented, expected);
}

/** Streamable HTTP (stateless) on 127.0.0.1 at /mcp, every request checked for the bearer token. */
export async function serveMcpHttp(
  factory: () => McpServer,
  options: { port?: number; token?: string } = {},
): Promise<HttpMcpServer> {
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
    const server = factory();
    // Stateless: no `sessionIdGenerator` (the SDK reads an absent one as undefined).
    const transport = new (mcpStreamableHttpModule().StreamableHTTPServerTransport)({});
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
