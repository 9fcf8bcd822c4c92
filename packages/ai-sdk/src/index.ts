export { mnemoMiddleware } from './mnemo-middleware.js';
export type { MnemoMiddlewareOptions } from './mnemo-middleware.js';
export { httpBackend, memoryBackend } from './mnemo-backend.js';
export type { BackendContextOptions, HttpBackendOptions, MnemoBackend, StoredTurn } from './mnemo-backend.js';
export { readPrompt } from './prompt-turns.js';
export type { PromptTurns } from './prompt-turns.js';
