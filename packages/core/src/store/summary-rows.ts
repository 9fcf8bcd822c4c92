import type { Summary } from '../compaction/summary.js';
import { fromJsonColumn, type ToIsoTime } from './knowledge-rows.js';

/** A `summaries` row as every SQL adapter reads it (the columns of {@link summaryColumns}); see `MessageRow`. */
export interface SummaryRow {
  readonly id: string;
  readonly tenant_id: string;
  readonly user_id: string;
  readonly conversation_id: string;
  readonly level: unknown;
  readonly from_seq: unknown;
  readonly to_seq: unknown;
  readonly content: string;
  readonly tokens: unknown;
  readonly folded_summary_ids: unknown;
  readonly summarizer: string;
  readonly input_tokens: unknown;
  readonly output_tokens: unknown;
  readonly fallback_reason: string | null;
  readonly created_at: unknown;
}

/** The columns of a summary, in the order every SQL adapter selects and inserts them. */
export const summaryColumns =
  'id, tenant_id, user_id, conversation_id, level, from_seq, to_seq, content, tokens, folded_summary_ids, summarizer, input_tokens, output_tokens, fallback_reason, created_at';

/** Maps a `summaries` row to a frozen {@link Summary}. */
export function summaryFromRow(row: SummaryRow, toIso: ToIsoTime): Summary {
  return Object.freeze({
    id: row.id,
    tenantId: row.tenant_id,
    userId: row.user_id,
    conversationId: row.conversation_id,
    level: Number(row.level),
    fromSeq: Number(row.from_seq),
    toSeq: Number(row.to_seq),
    content: row.content,
    tokens: Number(row.tokens),
    foldedSummaryIds: fromJsonColumn<string[]>(row.folded_summary_ids),
    summarizer: row.summarizer,
    inputTokens: Number(row.input_tokens),
    outputTokens: Number(row.output_tokens),
    ...(row.fallback_reason === null ? {} : { fallbackReason: row.fallback_reason }),
    createdAt: toIso(row.created_at),
  });
}
