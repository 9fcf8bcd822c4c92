// The shapes shared by the Store's per-concept ports (messages/message-port.ts, usage/usage-port.ts, …):
// what an adapter implements for each, and the table a port gives the composed store's one guard.

/** A result a part returns directly (a synchronous driver) or as a promise. */
export type Awaitable<T> = T | Promise<T>;

/** The index of a method's last parameter, its call options (optional parameters counted). */
type OptionsIndex<F> = F extends (...args: infer A) => unknown
  ? Required<A> extends readonly [...infer Init, unknown]
    ? Init['length']
    : never
  : never;

/**
 * For each method of port `P`: what it does in the words of an error (`"appending messages"` →
 * "appending messages failed: …") and where its call options are, so the composed store checks the
 * signal before calling the part; `stream` marks a method that returns an async iterable, checked when it
 * starts. The compiler holds the table to the port: every method, the right index.
 */
export type PortCalls<P> = {
  readonly [K in keyof P]-?: readonly [action: string, optionsAt: OptionsIndex<P[K]>, kind?: 'stream'];
};

/**
 * What an adapter implements for port `P`: the same methods with the same arguments (call options
 * included, though the composed store has already honoured their signal), returning a value or a promise.
 */
export type StorePart<P> = {
  [K in keyof P]: P[K] extends (...args: infer A) => Promise<infer R> ? (...args: A) => Awaitable<R> : P[K];
};
