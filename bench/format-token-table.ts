import { replayPolicies } from './replay-token-costs.js';
import type { DatasetReport, TokenReport } from './token-report.js';

const policyColumns = ['tok/req', 'last', 'sent', 'saved'] as const;
const columnGap = '  ';
const groupGap = '   ';

function formatCount(value: number): string {
  return value.toLocaleString('en-US');
}

/**
 * Renders one dataset as an aligned plain-text table: a row per conversation size, a column group per
 * policy (mean tokens per request, tokens of the last request, total sent, saved %), the full-history
 * total, and a footer with the mean `buildContext` latency per policy.
 */
export function formatTokenTable(dataset: DatasetReport, settings: TokenReport['settings']): string {
  const lines = [`${dataset.name}: ${dataset.source}`];
  if (dataset.skipped !== undefined) return [...lines, `  skipped: ${dataset.skipped}`].join('\n');

  const leading = [
    ['messages', 'requests'],
    ...dataset.rows.map((row) => [formatCount(row.messages), formatCount(row.policies.full.requests)]),
  ];
  const trailing = [
    ['full-history'],
    ...dataset.rows.map((row) => [formatCount(row.policies.full.totalFullHistoryTokens)]),
  ];
  const groups = replayPolicies.map((policy) => [
    [...policyColumns],
    ...dataset.rows.map((row) => {
      const cost = row.policies[policy];
      return [
        formatCount(cost.meanTokensPerRequest),
        formatCount(cost.lastRequestTokens),
        formatCount(cost.totalSentTokens),
        `${cost.savedPercent.toFixed(1)}%`,
      ];
    }),
  ]);
  const blocks = [leading, ...groups, trailing];
  const titles = ['', ...replayPolicies.map((policy) => `${policy} (${settings.budgets[policy]})`), ''];
  const widths = blocks.map((block) =>
    block[0]!.map((_, column) => Math.max(...block.map((cells) => cells[column]!.length))),
  );
  const blockWidth = (index: number) =>
    widths[index]!.reduce((sum, width) => sum + width, 0) + columnGap.length * (widths[index]!.length - 1);
  // A group title wider than its columns widens the group's first column, so the groups stay aligned.
  titles.forEach((title, index) => {
    widths[index]![0]! += Math.max(0, title.length - blockWidth(index));
  });
  const renderBlock = (block: string[][], index: number, rowIndex: number) =>
    block[rowIndex]!.map((cell, column) => cell.padStart(widths[index]![column]!)).join(columnGap);

  lines.push(
    '',
    titles
      .map((title, index) => title.padEnd(blockWidth(index)))
      .join(groupGap)
      .trimEnd(),
  );
  for (let rowIndex = 0; rowIndex < leading.length; rowIndex += 1) {
    lines.push(blocks.map((block, index) => renderBlock(block, index, rowIndex)).join(groupGap));
  }
  const latency = replayPolicies
    .map((policy) => `${policy} ${dataset.meanLatencyMicroseconds[policy].toFixed(1)}`)
    .join(' · ');
  const builds = dataset.rows.reduce((sum, row) => sum + row.policies.full.requests, 0);
  lines.push('', `mean buildContext latency, µs: ${latency}  (${formatCount(builds)} builds per policy)`);
  for (const note of dataset.notes) lines.push(`note: ${note}`);
  return lines.join('\n');
}
