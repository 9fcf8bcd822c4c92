import { MemoryError } from '@mnemo/core';
import { messageColumns, type MessageRow, type SearchHit, type SearchOptions } from '@mnemo/core/store-kit';
import { inConversation, toMessage } from './postgres-message-store.js';
import type { PostgresTables } from './postgres-tables.js';
import { checkTime } from './postgres-values.js';

/** A search result row: the message's columns, its conversation and its score. */
export type HitRow = MessageRow & { readonly conversation_id: string; readonly score: unknown };

/** Most hits one search returns (the port's bound on `k`). */
export const maxSearchK = 1000;

/** {@link messageColumns} qualified with the alias `m`. */
export const prefixedMessageColumns = messageColumns
  .split(', ')
  .map((column) => `m.${column}`)
  .join(', ');

/**
 * The WHERE conditions of a search's filters on the table aliased `alias` (which has `conversation_id` and
 * `created_at`), numbered after the query's own `lastIndex` parameters; `undefined` when the filters admit
 * nothing (an empty conversation list). `invalid_input` for a bad time.
 */
export function searchFilters(
  options: SearchOptions,
  lastIndex: number,
  alias: string,
): { clause: string; parameters: unknown[] } | undefined {
  const conditions: string[] = [];
  const parameters: unknown[] = [];
  const next = (value: unknown) => {
    parameters.push(value);
    return `$${lastIndex + parameters.length}`;
  };
  if (options.conversationIds !== undefined) {
    if (options.conversationIds.length === 0) return undefined;
    conditions.push(`${alias}.conversation_id = ANY(${next([...options.conversationIds])}::text[])`);
  }
  if (options.since !== undefined) conditions.push(`${alias}.created_at >= ${next(checkTime('since', options.since))}`);
  if (options.until !== undefined) conditions.push(`${alias}.created_at < ${next(checkTime('until', options.until))}`);
  return { clause: conditions.map((condition) => `AND ${condition}`).join(' '), parameters };
}

/** Checks `k` (1–{@link maxSearchK}); `invalid_input` otherwise. */
export function checkK(k: number): number {
  if (!Number.isInteger(k) || k < 1 || k > maxSearchK) {
    throw new MemoryError('invalid_input', `k must be an integer from 1 to ${maxSearchK}`, { details: { field: 'k' } });
  }
  return k;
}

/** Checks a vector's length against the model's and that every value is finite; `invalid_input` otherwise. */
export function checkVector(model: string, vector: Float32Array, dimensions: number): void {
  if (vector.length !== dimensions) throw dimensionMismatch(model, dimensions, vector.length);
  if (!vector.every(Number.isFinite))
    throw new MemoryError('invalid_input', `a vector of ${model} holds a value that is not a finite number`, {
      details: { model },
    });
}

/** The `invalid_input` error of a vector whose length is not the model's. */
export function dimensionMismatch(model: string, expected: number, actual: number): MemoryError {
  return new MemoryError('invalid_input', `model ${model} has ${expected}-dimensional vectors, got ${actual}`, {
    details: { model },
  });
}

/** Maps a hit row to a {@link SearchHit}; a score PostgreSQL could not compute (NaN, a zero vector's cosine) is 0. */
export function toHit(row: HitRow): SearchHit {
  const score = Number(row.score);
  return { conversationId: row.conversation_id, message: toMessage(row), score: Number.isNaN(score) ? 0 : score };
}

/** `column` is among the conversation's newest `$parameter` seqs ($1–$3 its scope): an index range, not a scan. */
export function newerThan(t: PostgresTables, column: string, parameter: number): string {
  return `${column} > (SELECT coalesce(max(seq), 0) FROM ${t.messages} WHERE ${inConversation}) - $${parameter}::bigint`;
}
