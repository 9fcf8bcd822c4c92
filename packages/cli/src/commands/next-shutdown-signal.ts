import { watchNpxStarter } from './watch-npx-starter.js';

/**
 * Resolves with the first SIGINT or SIGTERM, or with `disconnect` when the process was started with an
 * IPC channel (by `mnemo serve`) and its parent went away. Started through `npx`, an interrupt of npx
 * counts as SIGINT (see {@link watchNpxStarter}). Signals are process-wide; after the first, the
 * default handlers are back, so a second Ctrl-C ends a shutdown that hangs.
 */
export function nextShutdownSignal(): Promise<NodeJS.Signals | 'disconnect'> {
  return new Promise((resolve) => {
    const stop = (reason: NodeJS.Signals | 'disconnect') => {
      unwatch();
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      process.off('disconnect', onDisconnect);
      resolve(reason);
    };
    const onDisconnect = () => stop('disconnect');
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
    const unwatch = watchNpxStarter({
      env: process.env,
      onStop: (why) => stop(why === 'starter-gone' ? 'SIGTERM' : 'SIGINT'),
    });
    if (process.connected) process.once('disconnect', onDisconnect);
  });
}
