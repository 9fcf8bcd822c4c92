/** The IPC message a `mnemo worker` started by `mnemo serve` sends its parent once a second. */
export const heartbeatMessage = Object.freeze({ type: 'mnemo-worker-heartbeat' });

/** How often a worker sends {@link heartbeatMessage}, in ms. */
export const heartbeatIntervalMs = 1_000;

/** True for {@link heartbeatMessage} as it arrives over IPC. */
export function isHeartbeat(message: unknown): boolean {
  return (
    typeof message === 'object' && message !== null && (message as { type?: unknown }).type === heartbeatMessage.type
  );
}

/**
 * In a worker with an IPC channel to its parent: sends a heartbeat every second from the event loop, so
 * the parent can tell a worker that stopped running (SIGSTOP, a synchronous loop that never yields, a
 * machine that swaps it out) from one that is merely idle. Returns the function that stops it.
 */
export function startHeartbeat(): () => void {
  if (process.send === undefined) return () => undefined;
  const beat = () => {
    if (process.connected) process.send?.(heartbeatMessage);
  };
  beat();
  const timer = setInterval(beat, heartbeatIntervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
