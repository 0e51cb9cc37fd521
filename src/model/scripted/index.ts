export {
  defaultEmbeddingDimensions,
  embeddingWords,
  scriptedEmbedding,
} from "./embeddings.js";
export { normaliseRequest, type ScriptedApi } from "./normalise.js";
export {
  exhaustedReply,
  loadScript,
  type MatchableRequest,
  parseScript,
  type Script,
  ScriptCursor,
  type ScriptedReply,
  type ScriptedToolCall,
  type ScriptFaults,
  type ScriptMatch,
  type ScriptRule,
  scriptSchema,
  stopReasonOf,
} from "./script.js";
export {
  type RecordedRequest,
  type ScriptedServer,
  type ScriptedServerOptions,
  seededRandom,
  startScriptedServer,
} from "./server.js";
