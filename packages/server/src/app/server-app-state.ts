import type { Memory } from '@mnemo/core';
import type { Logger } from 'pino';

/** What `startServer` needs to know about an app built by `createServerApp`. */
export interface ServerAppState {
  readonly memory: Memory;
  /** API keys configured; 0 means the app trusts every caller and may only listen on loopback. */
  readonly keyCount: number;
  readonly logger: Logger;
}

const states = new WeakMap<object, ServerAppState>();

/** Records the state of an app (called once by `createServerApp`). */
export function rememberServerApp(app: object, state: ServerAppState): void {
  states.set(app, state);
}

/** The state of an app built by `createServerApp`, or `undefined` for any other Hono app. */
export function readServerAppState(app: object): ServerAppState | undefined {
  return states.get(app);
}
