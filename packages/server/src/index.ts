// The entry a user of @mnemo/server needs: build the app, serve it, mount route modules of one's own.
// The proxy and MCP route modules have their own entries (`@mnemo/server/proxy`, `@mnemo/server/mcp`).
export { createServerApp } from './app/create-server-app.js';
export type { ServerAppOptions } from './app/create-server-app.js';
export type { BuiltServerApp, ServerAppState } from './app/server-app-state.js';
export { getTenantId } from './app/server-deps.js';
export type {
  ServerApp,
  ServerContext,
  ServerDeps,
  ServerEnv,
  ServerRouteModule,
  ServerVariables,
  UpstreamLlmConfig,
} from './app/server-deps.js';
export { defaultKeyRateLimit, defaultServerLimits } from './app/server-limits.js';
export type { RateLimit, ServerLimits } from './app/server-limits.js';
export type { ApiKey, ServerAuth } from './auth/api-key-auth.js';
export { errorResponse } from './error-response.js';
export type { ErrorBody, ErrorResponse, WireErrorCode } from './error-response.js';
// Also used by the CLI's worker to throttle its repeated failure logs the way the server does.
export { createRepeatThrottle, repeatKeyOf } from './logging/repeat-throttle.js';
export type { RepeatDecision, RepeatThrottle } from './logging/repeat-throttle.js';
export { checkListenHost, defaultPort, startServer } from './serve/start-server.js';
export type { RunningServer, StartServerOptions } from './serve/start-server.js';
