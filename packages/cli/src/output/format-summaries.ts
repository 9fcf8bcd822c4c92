import type { Memory, Summary } from '@mnemo/core';
import { formatCount, formatTable } from './format-table.js';

/** What `memory.expand` returns (core does not export the type by name). */
export type ExpandedSummary = Awaited<ReturnType<Memory['expand']>>;

/** `1–30`: an inclusive seq range. */
export function formatSeqRange(fromSeq: number, toSeq: number): string {
  return fromSeq === toSeq ? String(fromSeq) : `${fromSeq}–${toSeq}`;
}

/**
 * Lays out summary versions as a table (id, level, messages covered, tokens, summarizer, what writing it
 * cost, folded ids, created time), followed by one line per summary a fallback wrote, with the reason.
 */
export function formatSummaries(summaries: readonly Summary[]): string {
  const right = 'right' as const;
  const columns = [
    { header: 'id' },
    { header: 'level', align: right },
    { header: 'messages', align: right },
    { header: 'tokens', align: right },
    { header: 'summarizer' },
    { header: 'prompt + output', align: right },
    { header: 'folded' },
    { header: 'created' },
  ];
  const rows = summaries.map((summary) => [
    summary.id,
    String(summary.level),
    formatSeqRange(summary.fromSeq, summary.toSeq),
    formatCount(summary.tokens),
    summary.fallbackReason === undefined ? summary.summarizer : `${summary.summarizer} (fallback)`,
    `${formatCount(summary.inputTokens)} + ${formatCount(summary.outputTokens)}`,
    summary.foldedSummaryIds.length === 0 ? '—' : summary.foldedSummaryIds.join(', '),
    summary.createdAt,
  ]);
  const fallbacks = summaries.flatMap((summary) =>
    summary.fallbackReason === undefined
      ? []
      : [
          `fallback: ${summary.id} was written by ${summary.summarizer} because the configured summarizer failed: ${summary.fallbackReason}`,
        ],
  );
  return formatTable(columns, rows) + fallbacks.map((line) => `${line}\n`).join('');
}

/**
 * Renders an expanded summary for reading: a header line, the summary text, the summaries it folded, and
 * its source messages, one block each (`#seq role time` then the content, indented).
 */
export function formatExpandedSummary(expanded: ExpandedSummary): string {
  const { summary } = expanded;
  const lines = [
    `summary ${summary.id} of conversation ${summary.conversationId} (user ${summary.userId}, tenant ${summary.tenantId})`,
    `level ${summary.level} · messages ${formatSeqRange(summary.fromSeq, summary.toSeq)} · ${formatCount(summary.tokens)} tokens · ` +
      `${summary.summarizer} · created ${summary.createdAt}`,
    ...(summary.fallbackReason === undefined
      ? []
      : [`fallback: the configured summarizer failed: ${summary.fallbackReason}`]),
    '',
    indent(summary.content),
    '',
  ];
  if (expanded.folded.length === 0) lines.push('folds no earlier summary');
  else {
    lines.push(`folds ${expanded.folded.length === 1 ? '1 summary' : `${expanded.folded.length} summaries`}:`);
    for (const folded of expanded.folded) {
      lines.push(
        `  ${folded.id}  level ${folded.level}  messages ${formatSeqRange(folded.fromSeq, folded.toSeq)}  ${formatCount(folded.tokens)} tokens`,
      );
    }
  }
  lines.push(
    '',
    `${expanded.messages.length === 1 ? '1 source message' : `${formatCount(expanded.messages.length)} source messages`}:`,
  );
  for (const message of expanded.messages) {
    lines.push(
      `  #${message.seq}  ${message.name === undefined ? message.role : `${message.role} (${message.name})`}  ${message.createdAt}`,
    );
    lines.push(indent(message.content, '    '));
  }
  return `${lines.join('\n')}\n`;
}

function indent(text: string, prefix = '  '): string {
  return text
    .split('\n')
    .map((line) => (line.length === 0 ? '' : `${prefix}${line}`))
    .join('\n');
}
