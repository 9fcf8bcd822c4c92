import type { Scope } from '../messages/scope.js';
import type { PortCalls } from '../store/port.js';
import type { CallOptions, Page, PageOptions } from '../store/store.js';
import type { UsageEntry, UsageRecord, UsageTotals } from './usage.js';

/** The usage ledger. Part of the `Store` port; an adapter implements it as a `StorePart<UsagePort>`. */
export interface UsagePort {
  /** Records one entry of the usage ledger (what a context build or a model call cost). */
  insertUsage(scope: Scope, record: UsageRecord, options?: CallOptions): Promise<void>;
  /** Sums the usage ledger of one conversation. */
  getUsageTotals(scope: Scope, options?: CallOptions): Promise<UsageTotals>;
  /** The usage ledger of one conversation, entry by entry in the order written, cursor-paged. */
  listUsage(scope: Scope, page?: PageOptions, options?: CallOptions): Promise<Page<UsageEntry>>;
}

/** What each method of {@link UsagePort} does, in the words of an error, and the index of its call options. */
export const usagePortCalls: PortCalls<UsagePort> = {
  insertUsage: ['recording usage', 2],
  getUsageTotals: ['summing usage', 1],
  listUsage: ['listing usage', 2],
};
