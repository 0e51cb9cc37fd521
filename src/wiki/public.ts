/**
 * `skillsmith/wiki` (experimental as a whole, see the README): the skill wiki of protocol B.
 * Build it from resources (repositories, articles, videos, images; local or by URL) behind five
 * deterministic acceptance gates, search it (BM25 shortlist, model selection, embeddings, an
 * online pool), export entries as Agent Skills folders, serve it over MCP.
 *
 * @packageDocumentation
 */
export { type BuildOptions, type BuildSummary, buildWiki } from "./build.js";
export { type ExportResult, exportEntry } from "./export.js";
export { createWikiMcpServer, openWikiServer, serveWikiHttp, serveWikiStdio } from "./mcp.js";
export { type AcquireOptions, type AcquireResult, acquireOnline } from "./online.js";
export {
  type SearchOptions,
  type SearchResult,
  type SelectionStrategy,
  searchSkills,
  WikiSearch,
} from "./search.js";
export { findEntry, listDomains, listEntries, readModality, type WikiEntry } from "./store.js";
