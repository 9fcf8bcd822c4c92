import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { createMemory, type Memory, type Store } from '@mnemo/core';
import { createSqliteStore } from '@mnemo/sqlite';
import { pino } from 'pino';
import { createServerApp, startServer, type RunningServer, type ServerAppOptions } from '../src/index.js';

/** A server on a real SQLite file, listening on 127.0.0.1 with a free port, and what the tests need around it. */
export interface TestServer {
  readonly url: string;
  readonly memory: Memory;
  readonly store: Store;
  readonly server: RunningServer;
  /** JSON log lines the server wrote. */
  readonly logs: Record<string, unknown>[];
  /** `fetch` against the server: a path, and init with an optional JSON body and API key. */
  request(path: string, init?: TestRequestInit): Promise<Response>;
  /** `request`, then the parsed JSON body (of the shape the caller names, unchecked) with the status and headers. */
  json<T = unknown>(path: string, init?: TestRequestInit): Promise<{ status: number; body: T; headers: Headers }>;
  close(): Promise<void>;
}

/** A request: `json` is sent as the body; `key` as `Authorization: Bearer`. */
export interface TestRequestInit extends RequestInit {
  readonly json?: unknown;
  readonly key?: string;
}

/**
 * Starts a server for a test. Rate limiting is off unless the options set it; compaction runs only when a
 * test drains it (`memory.runPendingJobs()`), so results never depend on the worker's timing.
 */
export async function startTestServer(
  options: Partial<Omit<ServerAppOptions, 'memory' | 'store' | 'logger'>> = {},
): Promise<TestServer> {
  const directory = await mkdtemp(join(tmpdir(), 'mnemo-server-'));
  const store = createSqliteStore({ path: join(directory, 'mnemo.db') });
  const memory = createMemory({
    store,
    worker: { autoStart: false },
    compaction: { settings: { triggerTokens: 200, keepRecentTokens: 60, keepRecentTurns: 1, maxSummaryTokens: 120 } },
  });
  const logs: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n'))
        if (line.trim() !== '') logs.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  const app = createServerApp({
    memory,
    logger: pino({ level: 'debug' }, sink),
    ...options,
    limits: { rateLimit: false, ...options.limits },
  });
  const server = await startServer({ app, host: '127.0.0.1', port: 0 });
  const request = (path: string, init: TestRequestInit = {}) => {
    const { json, key, headers, ...rest } = init;
    const merged = new Headers(headers);
    if (key !== undefined) merged.set('authorization', `Bearer ${key}`);
    if (json !== undefined) merged.set('content-type', 'application/json');
    return fetch(`${server.url}${path}`, {
      ...rest,
      headers: merged,
      ...(json === undefined ? {} : { body: JSON.stringify(json), method: rest.method ?? 'POST' }),
    });
  };
  return {
    url: server.url,
    memory,
    store,
    server,
    logs,
    request,
    async json<T>(path: string, init?: TestRequestInit) {
      const response = await request(path, init);
      const text = await response.text();
      return {
        status: response.status,
        headers: response.headers,
        body: (text === '' ? undefined : JSON.parse(text)) as T,
      };
    },
    async close() {
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}
