import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMemory, type Memory, type Message } from '@mnemo/core';
import { createSqliteStore } from '@mnemo/sqlite';
import { pino } from 'pino';
import { createServerApp, startServer, type ServerAppOptions } from '../src/index.js';
import { mountProxyRoutes } from '../src/proxy/index.js';

/** mnemo's app with the proxy mounted, on a SQLite file, serving on loopback. */
export interface ProxyApp {
  readonly url: string;
  readonly memory: Memory;
  /** Stored messages of a user's one conversation (named after them), oldest first. */
  stored(user: string): Promise<Message[]>;
  close(): Promise<void>;
}

/** Starts the app with `mountProxyRoutes` and the given upstreams (no compaction, no rate limit, silent log). */
export async function startProxyApp(options: Pick<ServerAppOptions, 'llm' | 'anthropic' | 'auth'>): Promise<ProxyApp> {
  const directory = await mkdtemp(join(tmpdir(), 'mnemo-proxy-'));
  const memory = createMemory({ store: createSqliteStore({ path: join(directory, 'mnemo.db') }), compaction: false });
  const app = createServerApp({
    memory,
    logger: pino({ level: 'silent' }),
    limits: { rateLimit: false },
    routes: [mountProxyRoutes],
    ...options,
  });
  const server = await startServer({ app, port: 0, shutdownTimeoutMs: 100 });
  return {
    url: server.url,
    memory,
    stored: (user) => memory.listMessages({ tenantId: 'default', userId: user, conversationId: user }),
    close: async () => {
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}

/** POSTs JSON to the app. */
export function postJson(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}
