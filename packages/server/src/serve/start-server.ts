import type { Server, ServerResponse } from 'node:http';
import { isIP, type AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { MemoryError } from '@mnemo/core';
import type { ServerAppState } from '../app/server-app-state.js';
import { isLoopbackHost } from '../auth/request-origin-guard.js';

/** Options of {@link startServer}. */
export interface StartServerOptions {
  /**
   * An app from `createServerApp`: its `serverState` says which memory to close on shutdown and how many
   * keys decide which hosts are allowed. Any other fetch handler is served as a keyless app with nothing to close.
   */
  readonly app: {
    readonly fetch: (request: Request) => Response | Promise<Response>;
    readonly serverState?: ServerAppState;
  };
  /** Default `127.0.0.1`. Any other than a loopback address needs API keys configured. */
  readonly host?: string;
  /** Default 8787; 0 picks a free port (read it from `url`). */
  readonly port?: number;
  /** How long shutdown waits for in-flight requests before cutting their connections, in ms. Default 10,000. */
  readonly shutdownTimeoutMs?: number;
}

/** A listening server. */
export interface RunningServer {
  /** Base URL, e.g. `http://127.0.0.1:8787`. */
  readonly url: string;
  readonly port: number;
  /**
   * Graceful shutdown: stops accepting connections, lets in-flight requests finish (cutting them after
   * `shutdownTimeoutMs`), then closes the memory, which stops its worker so a running job's lease lapses
   * for another replica. Calling it again returns the same promise.
   */
  close(): Promise<void>;
}

/** The port `mnemo serve` listens on by default. */
export const defaultPort = 8787;

/**
 * Throws `invalid_input` for a non-loopback host when no API key is configured: anyone who can reach
 * such a server could read and erase every conversation. `startServer` calls it; a CLI can call it
 * before opening anything.
 */
export function checkListenHost(host: string, apiKeyCount: number): void {
  if (apiKeyCount > 0 || isLoopbackHost(host)) return;
  throw new MemoryError(
    'invalid_input',
    `refusing to listen on ${host} without API keys: anyone who can reach it could read and erase every conversation. ` +
      'Configure API keys (MNEMO_API_KEYS=key:tenant, or server.apiKeys in mnemo.config.json), or listen on 127.0.0.1',
    { details: { field: 'host', host } },
  );
}

/**
 * Listens on `host:port` and resolves once it does. Refuses (`invalid_input`) a non-loopback host when
 * the app has no API keys, since anyone who can reach it could read and erase every conversation.
 * Fails with `unavailable` when the port cannot be bound.
 */
export async function startServer(options: StartServerOptions): Promise<RunningServer> {
  const host = options.host ?? '127.0.0.1';
  const state = options.app.serverState;
  checkListenHost(host, state?.keyCount ?? 0);
  const server = await listen(options.app, host, options.port ?? defaultPort);
  const inFlight = trackResponses(server);
  const { port } = server.address() as AddressInfo;
  const url = `http://${isIP(host) === 6 ? `[${host}]` : host}:${port}`;
  const timeoutMs = options.shutdownTimeoutMs ?? 10_000;
  let closing: Promise<void> | undefined;
  return {
    url,
    port,
    close() {
      closing ??= (async () => {
        await closeHttpServer(server, inFlight, timeoutMs);
        await state?.memory.close();
      })();
      return closing;
    },
  };
}

function listen(app: StartServerOptions['app'], host: string, port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = serve({ fetch: app.fetch, hostname: host, port }) as Server;
    const onError = (error: NodeJS.ErrnoException) => {
      reject(
        new MemoryError('unavailable', `cannot listen on ${host}:${port}: ${error.code ?? error.message}`, {
          cause: error,
          details: { host, port },
        }),
      );
    };
    server.once('error', onError);
    server.once('listening', () => {
      server.off('error', onError);
      resolve(server);
    });
  });
}

/** The responses being written right now. */
function trackResponses(server: Server): Set<ServerResponse> {
  const responses = new Set<ServerResponse>();
  server.on('request', (_request, response: ServerResponse) => {
    responses.add(response);
    response.once('close', () => responses.delete(response));
  });
  return responses;
}

/** Stops accepting, closes idle keep-alive connections, and waits for in-flight requests (cut after `timeoutMs`). */
function closeHttpServer(server: Server, inFlight: ReadonlySet<ServerResponse>, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    // A keep-alive connection would outlive its last response by the keep-alive timeout: close each
    // in-flight one as soon as its response is written.
    for (const response of inFlight) {
      if (!response.headersSent) response.setHeader('connection', 'close');
      response.once('finish', () => setImmediate(() => server.closeIdleConnections()));
    }
    const timer = setTimeout(() => server.closeAllConnections(), timeoutMs);
    timer.unref();
    server.close((error) => {
      clearTimeout(timer);
      if (error !== undefined && (error as NodeJS.ErrnoException).code !== 'ERR_SERVER_NOT_RUNNING') reject(error);
      else resolve();
    });
    // Keep-alive sockets that are idle now would hold close() open; busy ones close after their response.
    server.closeIdleConnections();
  });
}
