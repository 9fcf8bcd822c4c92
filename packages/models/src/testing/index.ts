export { startScriptedOpenAiServer } from './scripted-openai-server.js';
export type {
  ReceivedRequest,
  ScriptedContentReply,
  ScriptedDelayReply,
  ScriptedOpenAiServer,
  ScriptedOpenAiServerOptions,
  ScriptedRawReply,
  ScriptedReply,
  ScriptedStatusReply,
  ScriptedUsage,
} from './scripted-openai-server.js';
