import { summaryPortCalls, type SummaryPort } from '../compaction/summary-port.js';
import { MemoryError } from '../errors/memory-error.js';
import { filePortCalls, type FilePort } from '../files/file-port.js';
import { jobPortCalls, type JobPort } from '../jobs/job-port.js';
import { knowledgePortCalls, type KnowledgePort } from '../knowledge/knowledge-port.js';
import { messagePortCalls, type MessagePort } from '../messages/message-port.js';
import { searchPortCalls, type SearchPort } from '../recall/search-port.js';
import { erasurePortCalls, type ErasurePort } from '../store/erasure-port.js';
import type { Awaitable, PortCalls, StorePart } from '../store/port.js';
import type { CallOptions, Store, StoreLifecycle, StoreReadiness } from '../store/store.js';
import { transferPortCalls, type TransferPort } from '../store/transfer-port.js';
import { usagePortCalls, type UsagePort } from '../usage/usage-port.js';

/**
 * What {@link ComposedStore} is built from: one part per concept port (one object may serve several,
 * as an SQL adapter's message part also keeps the usage ledger) and the driver's edges.
 */
export interface StoreComposition {
  readonly messages: StorePart<MessagePort>;
  readonly usage: StorePart<UsagePort>;
  readonly summaries: StorePart<SummaryPort>;
  readonly jobs: StorePart<JobPort>;
  readonly search: StorePart<SearchPort>;
  readonly knowledge: StorePart<KnowledgePort>;
  readonly files: StorePart<FilePort>;
  readonly transfer: StorePart<TransferPort>;
  /** Erasure spans the concepts: each call is one transaction over all of them. */
  readonly erasure: StorePart<ErasurePort>;
  /** Wraps an error a part threw (a `MemoryError` passes through) into the `MemoryError` the caller gets; `action` says what failed. */
  toError(error: unknown, action: string): Error;
  /** Releases the connection or pool; called once, by the first `close()`. Throws a `MemoryError`. */
  closeConnection(): Awaitable<void>;
  /**
   * Runs one call's attempt (which checks the store is open and the signal not aborted, then runs the
   * part): an adapter may run it again, e.g. SQLite after a short wait while another connection holds
   * the write lock, instead of waiting synchronously on the event loop. What it finally throws is
   * wrapped with `toError`. Default: the attempt once.
   */
  runCall?<T>(action: string, attempt: () => Awaitable<T>): Promise<T>;
  /** What the store can do now (see `Store.checkReadiness`); default: one read of the conversations. */
  checkReadiness?(): Awaitable<StoreReadiness>;
}

type Concept = 'messages' | 'usage' | 'summaries' | 'jobs' | 'search' | 'knowledge' | 'files' | 'transfer' | 'erasure';

/** Each concept of the composition with its port's table of calls. */
const ports: { readonly [C in Concept]: PortCalls<unknown> } = {
  messages: messagePortCalls,
  usage: usagePortCalls,
  summaries: summaryPortCalls,
  jobs: jobPortCalls,
  search: searchPortCalls,
  knowledge: knowledgePortCalls,
  files: filePortCalls,
  transfer: transferPortCalls,
  erasure: erasurePortCalls,
};

/**
 * A {@link Store} composed of an adapter's parts ({@link StoreComposition}) behind one guard: every port
 * method checks that the store is open and the call's signal not aborted, runs the part's method with
 * the same arguments, and wraps what it throws with the composition's `toError`; an export (an async
 * iterable) is checked when it starts and wrapped as it is read. Calls after `close()` or with an aborted
 * signal are `unavailable`. The methods come from the ports' call tables, not one forward each.
 */
class GuardedStore {
  readonly #parts: StoreComposition;
  #closed = false;

  constructor(composition: StoreComposition) {
    this.#parts = composition;
    for (const [concept, calls] of Object.entries(ports) as [
      Concept,
      Record<string, readonly [string, number, 'stream'?]>,
    ][]) {
      const part = composition[concept] as unknown as Record<string, (...args: unknown[]) => unknown>;
      for (const [method, [action, optionsAt, kind]] of Object.entries(calls)) {
        const call = (args: unknown[]) => part[method]!.apply(part, args);
        const guarded =
          kind === 'stream'
            ? (...args: unknown[]) =>
                this.#stream(
                  action,
                  args[optionsAt] as CallOptions | undefined,
                  () => call(args) as AsyncIterable<unknown>,
                )
            : (...args: unknown[]) => this.#run(action, args[optionsAt] as CallOptions | undefined, () => call(args));
        Object.defineProperty(this, method, { value: guarded, writable: true, configurable: true, enumerable: false });
      }
    }
  }

  /**
   * What the store can do now: the adapter's checks (SQLite: a write, the disk's free space, corruption
   * seen; PostgreSQL: a read and whether the server takes writes), else one read. Never throws for a
   * failing store: the failure is the answer (`ready: false` and the check that failed).
   */
  async checkReadiness(options?: CallOptions): Promise<StoreReadiness> {
    try {
      this.#check('checking readiness', options);
      if (this.#parts.checkReadiness !== undefined) return await this.#parts.checkReadiness();
      await this.#parts.messages.listConversations({ tenantId: 'default' }, { limit: 1 });
      return { ready: true, checks: [{ name: 'read', ok: true }] };
    } catch (error) {
      const wrapped = this.#parts.toError(error, 'checking readiness');
      return { ready: false, checks: [{ name: 'read', ok: false, message: wrapped.message }] };
    }
  }

  /** Releases the connection or pool; closing twice is not an error. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#parts.closeConnection();
  }

  async #run<T>(action: string, options: CallOptions | undefined, body: () => Awaitable<T>): Promise<T> {
    this.#check(action, options);
    let retry = false;
    // An attempt the adapter runs again checks again: the store may have closed, the signal aborted, meanwhile.
    const attempt = () => {
      if (retry) this.#check(action, options);
      retry = true;
      return body();
    };
    try {
      return await (this.#parts.runCall === undefined ? attempt() : this.#parts.runCall(action, attempt));
    } catch (error) {
      throw this.#parts.toError(error, action);
    }
  }

  async *#stream<T>(action: string, options: CallOptions | undefined, open: () => AsyncIterable<T>): AsyncIterable<T> {
    this.#check(action, options);
    try {
      yield* open();
    } catch (error) {
      throw this.#parts.toError(error, action);
    }
  }

  #check(action: string, options: CallOptions | undefined): void {
    if (this.#closed) throw new MemoryError('unavailable', `${action} failed: the store is closed`);
    const signal = options?.signal;
    // A statement, once started, runs to its end whatever the caller does next (a synchronous driver
    // cannot be interrupted; a server finishes what it was sent), so the signal is honoured before
    // starting, which is the only point where aborting changes nothing stored.
    if (signal?.aborted === true) {
      throw new MemoryError('unavailable', `${action} was aborted`, {
        cause: signal.reason,
        details: { aborted: true },
      });
    }
  }
}

/** The class of {@link GuardedStore} as what it is: a {@link Store}. The SQL adapters and `InMemoryStore` extend it. */
export const ComposedStore = GuardedStore as unknown as new (composition: StoreComposition) => ComposedStore;
/** A composed store always answers readiness (the adapter's checks, or one read). */
export type ComposedStore = Store & Required<StoreLifecycle>;
