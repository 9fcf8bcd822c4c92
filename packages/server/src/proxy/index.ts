// The entry a user of the proxy needs: the route module to mount (`routes: [mountProxyRoutes]`; it mounts
// chat completions, responses and messages), the header names clients send and read, and the upstream
// timeouts' defaults.
export { mountProxyRoutes, tokensFullHeader, tokensSavedHeader, tokensSentHeader } from './mount-proxy-routes.js';
export { conversationHeader, maxTokensHeader, proxyPolicyHeader } from './proxy-request.js';
export { defaultUpstreamTimeouts, UpstreamTimeoutError } from './upstream.js';
export type { UpstreamTimeoutPhase, UpstreamTimeouts } from './upstream.js';
