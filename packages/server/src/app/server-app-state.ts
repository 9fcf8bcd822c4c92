import type { Memory } from '@mnemo/core';
import type { Logger } from 'pino';
import type { ServerApp } from './server-deps.js';

/** What `startServer` needs to know about an app built by `createServerApp`. */
export interface ServerAppState {
  /** The engine the app serves; `startServer`'s `close()` closes it after the last response. */
  readonly memory: Memory;
  /** API keys configured; 0 means the app trusts every caller and may only listen on loopback. */
  readonly keyCount: number;
  readonly logger: Logger;
}

/** The app `createServerApp` returns: the Hono app, carrying its own {@link ServerAppState} (no registry beside it). */
export type BuiltServerApp = ServerApp & { readonly serverState: ServerAppState };
