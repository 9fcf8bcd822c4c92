import type { Memory } from '@mnemo/core';
import type { Context, Hono } from 'hono';
import type { Logger } from 'pino';
import type { ServerMetrics } from '../metrics/server-metrics.js';
import type { RouteRegistry } from '../openapi/route-spec.js';
import type { ServerLimits } from './server-limits.js';

/** The OpenAI-compatible endpoint the proxy forwards to; every field optional (the proxy decides what it needs). */
export interface UpstreamLlmConfig {
  readonly baseUrl?: string;
  /** The upstream's key, sent as `Authorization: Bearer …`. mnemo's own API keys are never sent upstream. */
  readonly apiKey?: string;
  readonly model?: string;
  /**
   * Pass the client's own provider key through when no `apiKey` is configured: the
   * `X-Mnemo-Upstream-Authorization` header's value or, on a server without API keys (where
   * `Authorization` cannot be a mnemo key), the client's `Authorization`. Default false: nothing is sent.
   */
  readonly passClientKey?: boolean;
  /**
   * When the client sent no `prompt_cache_key`, the proxy sets one stable per tenant, end user and
   * conversation (a hash: no id reaches the provider), so OpenAI routes the conversation's requests to
   * the same prompt cache. Default true; false leaves it out. Cache options the client sends pass through.
   */
  readonly promptCacheKey?: boolean;
  /** Time to open a connection to the upstream, in ms; default 10,000. Past it the proxy answers 504 `upstream_timeout`. */
  readonly connectTimeoutMs?: number;
  /**
   * Time from sending a request to the upstream's response headers, in ms; default 120,000 (a
   * non-streamed reply is generated in full first). Past it the proxy answers 504 `upstream_timeout`.
   */
  readonly firstByteTimeoutMs?: number;
  /**
   * Longest silence between two pieces of the upstream's answer, in ms; default 60,000. Past it a
   * non-streamed request gets 504 `upstream_timeout`, a stream gets an error event after what arrived
   * and its partial reply is stored marked incomplete.
   */
  readonly idleTimeoutMs?: number;
  /**
   * How `POST /v1/responses` reaches this upstream: `forward` (it speaks Responses), `translate` (to
   * chat completions and back: Ollama, vLLM, llama.cpp and most OpenAI-compatible servers), or `auto`
   * (the default): forward to `api.openai.com`, translate for every other base URL.
   */
  readonly responsesApi?: 'auto' | 'forward' | 'translate';
}

/**
 * Per-request variables every handler can read with `c.get(...)`: `tenantId` is set by the auth
 * middleware from the API key (never from the request), `requestId` and the request's child `logger`
 * by the request middleware.
 */
export interface ServerVariables {
  tenantId: string;
  /** True when the request's `Authorization` carried one of mnemo's API keys (so it must never leave mnemo). */
  authenticatedByKey: boolean;
  requestId: string;
  logger: Logger;
}

/** The Hono environment of the mnemo app. */
export interface ServerEnv {
  Variables: ServerVariables;
}

/** The Hono app {@link createServerApp} returns and route modules mount on. */
export type ServerApp = Hono<ServerEnv>;

/** A Hono context of the mnemo app. */
export type ServerContext = Context<ServerEnv>;

/** What a route module gets besides the app: the engine (the one path to the data) and the server's settings and instruments. */
export interface ServerDeps {
  readonly memory: Memory;
  readonly logger: Logger;
  readonly limits: ServerLimits;
  readonly llm: UpstreamLlmConfig;
  /** The Anthropic Messages endpoint `POST /v1/messages` forwards to (its `apiKey` is sent as `x-api-key`); empty when none is configured. */
  readonly anthropic: UpstreamLlmConfig;
  /** API keys configured; 0 means every caller is trusted (tenant `default`). */
  readonly keyCount: number;
  readonly metrics: ServerMetrics;
  /** Routes registered here (with `registerRoute`) are validated with zod and listed in `/openapi.json`. */
  readonly routes: RouteRegistry;
}

/**
 * A module of routes mounted on the app, e.g. the OpenAI-compatible proxy or MCP. It runs after the
 * request, auth, rate-limit and body-limit middleware are installed, so its routes are authenticated
 * and limited like the built-in ones; it reads the tenant with `c.get('tenantId')`.
 */
export type ServerRouteModule = (app: ServerApp, deps: ServerDeps) => void;

/** The tenant of the current request, as resolved from its API key by the auth middleware. */
export function getTenantId(c: ServerContext): string {
  return c.get('tenantId');
}
