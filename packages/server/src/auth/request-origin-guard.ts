import { isIP } from 'node:net';
import type { MiddlewareHandler } from 'hono';
import type { ServerEnv } from '../app/server-deps.js';
import { errorResponse } from '../error-response.js';

/** Options of {@link createRequestOriginGuard}. */
export interface RequestOriginGuardOptions {
  /** Host names answered besides loopback ones (case-insensitive, without port). */
  readonly allowedHosts: readonly string[];
  /** Browser origins allowed to change state (the CORS origins); the server's own origin always is. */
  readonly allowedOrigins: readonly string[];
  /** With API keys a request cannot act without one; without, the Host check always applies. */
  readonly keyCount: number;
}

/** True for `localhost`, 127.0.0.0/8 and ::1 (with or without brackets). */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  if (bare === 'localhost' || bare.endsWith('.localhost')) return true;
  if (isIP(bare) === 4) return bare.startsWith('127.');
  return bare === '::1' || bare === '0:0:0:0:0:0:0:1' || bare === '::ffff:127.0.0.1';
}

const stateChanging = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * Keeps web pages out of a server they were not served by. Host: a server without API keys (which
 * trusts every caller on loopback) answers only requests whose Host header is a loopback name or an
 * allowed host (421 otherwise), so a DNS-rebinding page on `evil.example` cannot read it; with keys the
 * check applies only when `allowedHosts` is set. Origin: a state-changing request that a browser marks
 * with an Origin that is neither allowed nor the server's own is refused (403), so a page cannot write
 * into memory with a request that needs no CORS preflight.
 */
export function createRequestOriginGuard(options: RequestOriginGuardOptions): MiddlewareHandler<ServerEnv> {
  const allowedHosts = new Set(options.allowedHosts.map((host) => host.toLowerCase()));
  const allowedOrigins = new Set(options.allowedOrigins.map((origin) => origin.toLowerCase()));
  const checkHost = options.keyCount === 0 || allowedHosts.size > 0;
  return async (c, next) => {
    const host = c.req.header('host') ?? '';
    const hostname = hostnameOf(host);
    if (checkHost && !(isLoopbackHost(hostname) || allowedHosts.has(hostname))) {
      return errorResponse(
        c,
        'misdirected_request',
        `this server does not answer for host ${JSON.stringify(host)}: use a loopback address, or add the name to the allowed hosts (MNEMO_ALLOWED_HOSTS)`,
      );
    }
    const origin = c.req.header('origin');
    if (
      origin !== undefined &&
      stateChanging.has(c.req.method) &&
      !allowedOrigins.has(origin.toLowerCase()) &&
      !isSameOrigin(origin, host)
    ) {
      return errorResponse(
        c,
        'forbidden',
        `requests from the browser origin ${JSON.stringify(origin)} may not change anything here: add it to the allowed CORS origins to allow it`,
      );
    }
    await next();
  };
}

// "evil.example:8787" → "evil.example", "[::1]:8787" → "::1".
function hostnameOf(host: string): string {
  const trimmed = host.trim().toLowerCase();
  if (trimmed.startsWith('[')) return trimmed.slice(1, trimmed.indexOf(']') < 0 ? undefined : trimmed.indexOf(']'));
  const colon = trimmed.lastIndexOf(':');
  return colon < 0 ? trimmed : trimmed.slice(0, colon);
}

function isSameOrigin(origin: string, host: string): boolean {
  try {
    return new URL(origin).host.toLowerCase() === host.trim().toLowerCase();
  } catch {
    return false; // "null" (sandboxed frames, file: pages) and garbage are no origin of ours
  }
}
