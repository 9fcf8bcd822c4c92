export { mountProxyRoutes, tokensFullHeader, tokensSavedHeader, tokensSentHeader } from './mount-proxy-routes.js';
export { chatCompletionBodySchema, conversationHeader, maxTokensHeader, proxyPolicyHeader } from './proxy-request.js';
export type { ChatCompletionBody, ProxyRequest } from './proxy-request.js';
export { dedupSlackMessages, isSameTurn, selectNewTurns } from './select-new-turns.js';
export type { NewTurns, TurnAlignment } from './select-new-turns.js';
export { defaultUpstreamTimeouts, UpstreamTimeoutError } from './upstream.js';
export type { UpstreamTimeoutPhase, UpstreamTimeouts } from './upstream.js';
