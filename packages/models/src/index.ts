export { createOpenAiChatModel } from './openai-chat-model.js';
export type { ChatCompletion, ChatUsage, OpenAiChatModel, OpenAiChatModelOptions } from './openai-chat-model.js';
export { toModelError } from './to-model-error.js';
export type { ModelCallDescription } from './to-model-error.js';
