export { createOpenAiChatModel } from './openai-chat-model.js';
export type { ChatCompletion, ChatUsage, OpenAiChatModel, OpenAiChatModelOptions } from './openai-chat-model.js';
