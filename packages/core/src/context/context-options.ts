import { MemoryError } from '../errors/memory-error.js';
import type { ContextRequest } from './build-context.js';
import { contextPolicies, recallModes, type ContextPolicy, type RecallMode } from './context-types.js';

/** Per-call options of `buildContext`; anything left out takes the engine's {@link ContextDefaults}. */
export interface ContextOptions {
  readonly policy?: ContextPolicy;
  /** Budget of the whole request, system prompt and framing included, in tokens of the engine's encoding. */
  readonly maxTokens?: number;
  /** System prompt, pinned first; never dropped, never shortened (`budget_exceeded` if it cannot fit). */
  readonly system?: string;
  /** Text of the current turn; the recall-based policies search with it. */
  readonly query?: string;
  /** When the hybrid policy recalls: for turns that ask (`when-asked`) or on every turn (`every-turn`). */
  readonly recall?: RecallMode;
  /** Turns the `window` policy keeps. */
  readonly windowTurns?: number;
  /** Build as if the conversation ended at this seq (what a regenerated reply is built from); default: its newest message. */
  readonly throughSeq?: number;
  /** False builds a preview (the inspector's "next request") that leaves the usage ledger as it was. Default true. */
  readonly record?: boolean;
  readonly signal?: AbortSignal;
}

/** Engine-wide context defaults. */
export interface ContextDefaults {
  readonly policy: ContextPolicy;
  readonly maxTokens: number;
  readonly windowTurns: number;
  /**
   * When the hybrid policy recalls snippets: `when-asked` for a turn that asks something (a question, "remind
   * me …"; see `turnAsks`), `every-turn` for every turn. Snippets are the part of a prompt a provider's
   * cache never holds, so recalling only when asked costs less (decision 0043).
   */
  readonly recall: RecallMode;
}

/** The built-in defaults: the hybrid policy within 2,000 tokens, recalling when a turn asks; 4 turns for `window`. */
export const builtInContextDefaults: ContextDefaults = Object.freeze({
  policy: 'hybrid',
  maxTokens: 2000,
  windowTurns: 4,
  recall: 'when-asked',
});

/** Largest budget accepted, in tokens (well above any model's window; catches unit mistakes). */
export const maxContextTokens = 10_000_000;

/** Merges and checks engine defaults once, at construction. */
export function resolveContextDefaults(defaults: Partial<ContextDefaults> = {}): ContextDefaults {
  const merged = { ...builtInContextDefaults, ...defaults };
  checkPolicy(merged.policy);
  checkInteger('maxTokens', merged.maxTokens, 1, maxContextTokens);
  checkInteger('windowTurns', merged.windowTurns, 1, 100_000);
  checkRecall(merged.recall);
  return Object.freeze(merged);
}

/** Checks per-call options and fills them from the defaults; throws `invalid_input` naming the field. */
export function assertContextOptions(options: ContextOptions, defaults: ContextDefaults): ContextRequest {
  const policy = options.policy ?? defaults.policy;
  checkPolicy(policy);
  const maxTokens = options.maxTokens ?? defaults.maxTokens;
  checkInteger('maxTokens', maxTokens, 1, maxContextTokens);
  const windowTurns = options.windowTurns ?? defaults.windowTurns;
  checkInteger('windowTurns', windowTurns, 1, 100_000);
  const recall = options.recall ?? defaults.recall;
  checkRecall(recall);
  if (options.record !== undefined && typeof options.record !== 'boolean') {
    throw new MemoryError('invalid_input', 'record must be a boolean', { details: { field: 'record' } });
  }
  if (options.system !== undefined && typeof options.system !== 'string') {
    throw new MemoryError('invalid_input', 'system must be a string', { details: { field: 'system' } });
  }
  return {
    policy,
    maxTokens,
    windowTurns,
    recall,
    ...(options.system === undefined ? {} : { system: options.system }),
    ...(options.query === undefined ? {} : { query: checkQuery(options.query) }),
    ...(options.throughSeq === undefined ? {} : { throughSeq: checkThroughSeq(options.throughSeq) }),
    ...(options.record === false ? { record: false } : {}),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  };
}

function checkThroughSeq(throughSeq: unknown): number {
  checkInteger('throughSeq', throughSeq, 1, Number.MAX_SAFE_INTEGER);
  return throughSeq as number;
}

function checkQuery(query: unknown): string {
  if (typeof query !== 'string')
    throw new MemoryError('invalid_input', 'query must be a string', { details: { field: 'query' } });
  return query;
}

function checkRecall(recall: unknown): asserts recall is RecallMode {
  if (!(recallModes as readonly unknown[]).includes(recall)) {
    throw new MemoryError(
      'invalid_input',
      `recall must be one of ${recallModes.join(', ')} (got ${JSON.stringify(recall)})`,
      { details: { field: 'recall', allowed: recallModes } },
    );
  }
}

function checkPolicy(policy: unknown): asserts policy is ContextPolicy {
  if (!(contextPolicies as readonly unknown[]).includes(policy)) {
    throw new MemoryError(
      'invalid_input',
      `policy must be one of ${contextPolicies.join(', ')} (got ${JSON.stringify(policy)})`,
      {
        details: { field: 'policy', allowed: contextPolicies },
      },
    );
  }
}

function checkInteger(field: string, value: unknown, min: number, max: number): void {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new MemoryError(
      'invalid_input',
      `${field} must be an integer from ${min} to ${max} (got ${JSON.stringify(value)})`,
      {
        details: { field, min, max },
      },
    );
  }
}
