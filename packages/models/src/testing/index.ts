export type { ScriptedVectorsReply } from './embeddings-response.js';
export { startScriptedAnthropicServer } from './scripted-anthropic-server.js';
export type {
  ScriptedAnthropicServer,
  ScriptedAnthropicServerOptions,
  ScriptedMessagesReply,
} from './scripted-anthropic-server.js';
export { startScriptedOpenAiServer } from './scripted-openai-server.js';
export type {
  ReceivedRequest,
  ScriptedContentReply,
  ScriptedDelayReply,
  ScriptedEmbeddingReply,
  ScriptedOpenAiServer,
  ScriptedOpenAiServerOptions,
  ScriptedPause,
  ScriptedRawReply,
  ScriptedReply,
  ScriptedStatusReply,
  ScriptedToolCall,
  ScriptedUsage,
} from './scripted-openai-server.js';
