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
export { defaultKeyRateLimit, defaultServerLimits, resolveServerLimits } from './app/server-limits.js';
export type { RateLimit, ServerLimits } from './app/server-limits.js';
export { bearerToken, createApiKeyMatcher, keylessTenantId } from './auth/api-key-auth.js';
export type { ApiKey, ApiKeyMatcher, ServerAuth } from './auth/api-key-auth.js';
export {
  errorBody,
  errorResponse,
  httpOnlyErrorCodes,
  retryAfterHeader,
  statusForCode,
  toErrorResponse,
} from './error-response.js';
export type { ErrorBody, ErrorResponse, WireErrorCode } from './error-response.js';
export { createTokenBucketLimiter } from './limits/token-bucket.js';
export type { RateDecision, TokenBucketLimiter } from './limits/token-bucket.js';
export { requestIdHeader } from './logging/request-middleware.js';
export { createRepeatThrottle, repeatKeyOf } from './logging/repeat-throttle.js';
export type { RepeatDecision, RepeatThrottle } from './logging/repeat-throttle.js';
export { createServerMetrics, latencyBucketsSeconds } from './metrics/server-metrics.js';
export type { ContextUsage, ServerMetrics } from './metrics/server-metrics.js';
export { buildOpenApiDocument } from './openapi/build-openapi-document.js';
export type { OpenApiDocument } from './openapi/build-openapi-document.js';
export { createRouteRegistry, parseJsonBody, parseWith, registerRoute } from './openapi/route-spec.js';
export type { HttpMethod, RouteInput, RouteRegistry, RouteResponse, RouteSpec } from './openapi/route-spec.js';
export { publicPaths, serverVersion } from './operations/operations-routes.js';
export { userHeader } from './resource-api/request-scope.js';
export { defaultSeedMemoryType, policyHeader, seedMemoryTypes } from './seed-api/seed-memory-routes.js';
export type { SeedMemoryType } from './seed-api/seed-memory-routes.js';
export { checkListenHost, defaultPort, startServer } from './serve/start-server.js';
export { createRequestOriginGuard, isLoopbackHost } from './auth/request-origin-guard.js';
export type { RequestOriginGuardOptions } from './auth/request-origin-guard.js';
export type { RunningServer, StartServerOptions } from './serve/start-server.js';
