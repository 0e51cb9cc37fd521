/**
 * The MCP SDK, loaded on first use: it is an optional peer dependency that only `skill serve-mcp`
 * and the wiki's MCP server need. Required (its CommonJS build) so the server factories stay
 * synchronous, and always through here so the server, its transports and `McpError` come from
 * one copy of the SDK.
 */
import type * as McpServerModule from "@modelcontextprotocol/sdk/server/mcp.js";
import type * as StdioModule from "@modelcontextprotocol/sdk/server/stdio.js";
import type * as StreamableHttpModule from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type * as TypesModule from "@modelcontextprotocol/sdk/types.js";
import { requireOptional } from "../core/optional.js";

const FEATURE = "the MCP servers (skill serve-mcp, wiki serve)";

export function mcpServerModule(): typeof McpServerModule {
  return requireOptional("@modelcontextprotocol/sdk/server/mcp.js", FEATURE);
}

export function mcpStdioModule(): typeof StdioModule {
  return requireOptional("@modelcontextprotocol/sdk/server/stdio.js", FEATURE);
}

export function mcpStreamableHttpModule(): typeof StreamableHttpModule {
  return requireOptional("@modelcontextprotocol/sdk/server/streamableHttp.js", FEATURE);
}

export function mcpTypesModule(): typeof TypesModule {
  return requireOptional("@modelcontextprotocol/sdk/types.js", FEATURE);
}
