export { startScriptedOpenAiServer } from './scripted-openai-server.js';
export type {
  ReceivedRequest,
  ScriptedContentReply,
  ScriptedDelayReply,
  ScriptedOpenAiServer,
  ScriptedOpenAiServerOptions,
  ScriptedPause,
  ScriptedRawReply,
  ScriptedReply,
  ScriptedStatusReply,
  ScriptedToolCall,
  ScriptedUsage,
} from './scripted-openai-server.js';
