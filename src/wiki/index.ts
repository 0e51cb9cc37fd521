/** The skill wiki: resources, distiller, acceptance gates, index and selection, online pool, MCP server. */
export { Bm25Index, type Bm25Parameters, type ScoredDocument, tokenize } from "../core/bm25.js";
export {
  type BuildOptions,
  type BuildSummary,
  buildWiki,
  type CandidateOutcome,
  type CandidateReport,
} from "./build.js";
export {
  type ApplyResult,
  applyCapability,
  builtinImplementations,
  type CapabilitiesManifest,
  capabilitiesSchema,
  loadCapabilities,
} from "./capabilities.js";
export {
  type Candidate,
  type DistilledSkill,
  distillerOutputSchema,
  distilResource,
  loadDistillerPrompt,
  postProcess,
} from "./distill.js";
export {
  CardEmbeddings,
  EMBEDDING_MODEL_VARIABLE,
  embeddingCachePath,
  rankByCosine,
  resolveSearchEmbeddingModel,
} from "./embedding.js";
export { type ExportResult, exportEntry, exportedSkillName } from "./export.js";
export {
  type CodeRunner,
  defaultCodeRunner,
  type GateName,
  type GateResult,
  gateNames,
  LanguageRunner,
  type RunLimits,
  type RunOutcome,
  SandboxCodeRunner,
  UnavailableRunner,
} from "./gates.js";
export {
  createWikiMcpServer,
  type HttpWikiServer,
  openWikiServer,
  serveWikiHttp,
  serveWikiStdio,
  type WikiServerState,
} from "./mcp.js";
export * from "./meta.js";
export {
  type AcquireOptions,
  type AcquireResult,
  type AcquisitionFailure,
  acquireOnline,
  type ConnectorContext,
  connectorsFor,
  LocalFolderConnector,
  needsAcquisition,
  ONLINE_POOL_BUDGET_LIMIT,
  type PoolRecord,
  poolRecordSchema,
  type ResourceConnectorV1,
  ResourceListConnector,
} from "./online.js";
export { BrowserRenderer, isRenderedLanguage, RENDERED_LANGUAGES } from "./render.js";
export {
  listResourceInputs,
  prepareResource,
  type ResourceInput,
  type ResourceSpec,
  resolveResourceArgument,
} from "./resources/collect.js";
export { recogniseLicence } from "./resources/licence.js";
export { type TargetedQuery, targetedQuery } from "./resources/query.js";
export {
  type BackendEnvironment,
  backendConfigOf,
  createSearchBackend,
  fillTemplate,
  parseJsonPath,
  type ResourceSearchBackendV1,
  registerSearchBackend,
  type SearchAnswer,
  type SearchContext,
  type SearchHit,
  searchBackendKinds,
  selectJsonPath,
  TEMPLATE_VARIABLES,
} from "./resources/search.js";
export type { ExtractedUnit, PreparedResource } from "./resources/types.js";
export {
  cloneRepository,
  DOWNLOAD_CACHE,
  downloadDocument,
  type FetchOptions,
  fetchRemoteResource,
  looksLikeUrl,
  parseResourceUrl,
  type RemoteOrigin,
  type RemoteResourceSpec,
} from "./resources/url.js";
export {
  type CardSearch,
  cardOf,
  openCardSearch,
  type SearchOptions,
  type SearchResult,
  type SelectionStrategy,
  type SkillCard,
  searchSkills,
  selectionStrategies,
  WikiSearch,
} from "./search.js";
export {
  IndexedWikiSearch,
  SEARCH_INDEX_FORMAT,
  searchIndexPath,
  writeSearchIndex,
} from "./search-index.js";
export { renderCards, selectFromShortlist, selectionSchema } from "./select.js";
export {
  acquireBuildLock,
  findEntry,
  listDomains,
  listEntries,
  readModality,
  readResourceManifest,
  readTaxonomy,
  readWikiManifest,
  type WikiEntry,
  writeEntry,
} from "./store.js";
