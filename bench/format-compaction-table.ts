import type { SeedComparison } from './compare-with-seed.js';
import { formatCount, formatPercent, formatTable } from '../packages/cli/dist/output/format-table.js';
import type { CompactionCostSeries } from './replay-compaction-costs.js';

/** The definitions every compaction table is read with; printed under the tables and written to bench/README.md. */
export const compactionDefinitions = [
  'per request = the request the bot sends last at length N (before the last assistant message among the first N), as in the seed',
  'net/req = sent/req + (summarizer input + output tokens spent up to N) ÷ requests up to N: compaction cost amortized per request',
  'cumulative = Σ sent (+ Σ summarizer) against Σ full over every request up to N; block = tokens of the summary block in the last request',
  'summarizer tokens: the offline extractive summarizer writes the summaries and counts the prompt an LLM summarizer would have been sent',
];

/**
 * Renders the summary variants of one dataset as a long table: a row per (size, variant) with the per-request
 * figures of the last request at that size, gross and net of the summarizer's tokens, and the cumulative ones;
 * then, for the sizes of 100 messages and more, a line per variant showing how flat its per-request cost stays.
 */
export function formatCompactionTable(
  name: string,
  series: readonly CompactionCostSeries[],
  maxTokens: number,
): string {
  const right = true;
  const columns = [
    { header: 'messages', right },
    { header: 'requests', right },
    { header: 'policy' },
    { header: 'full/req', right },
    { header: 'sent/req', right },
    { header: 'saved', right },
    { header: 'block', right },
    { header: 'calls', right },
    { header: 'summarizer in + out', right },
    { header: 'net/req', right },
    { header: 'net saved', right },
    { header: 'Σ full', right },
    { header: 'cum saved', right },
    { header: 'cum net saved', right },
  ];
  const sizes = [...new Set(series.flatMap((entry) => entry.rows.map((row) => row.messages)))].sort((a, b) => a - b);
  const rows = sizes.flatMap((size) =>
    series.flatMap((entry, index) => {
      const row = entry.rows.find((candidate) => candidate.messages === size);
      if (row === undefined) return [];
      return [
        [
          index === 0 ? formatCount(size) : '',
          index === 0 ? formatCount(row.requests) : '',
          entry.variant,
          formatCount(row.fullTokensPerRequest),
          formatCount(row.sentTokensPerRequest),
          formatPercent(row.savedPercentPerRequest),
          formatCount(row.summaryBlockTokens),
          formatCount(row.compactions),
          `${formatCount(row.summarizerInputTokens)} + ${formatCount(row.summarizerOutputTokens)}`,
          formatCount(row.netTokensPerRequest),
          formatPercent(row.netSavedPercentPerRequest),
          formatCount(row.totalFullHistoryTokens),
          formatPercent(row.savedPercentTotal),
          formatPercent(row.netSavedPercentTotal),
        ],
      ];
    }),
  );
  const lines = [
    `${name} — summary policies, budget ${formatCount(maxTokens)} tokens per request`,
    '',
    formatTable(columns, rows),
    '',
  ];
  const longSizes = sizes.filter((size) => size >= 100);
  if (longSizes.length >= 2) {
    lines.push(
      `flat out to ${formatCount(longSizes[longSizes.length - 1]!)} messages? sent/req (net/req) at ${longSizes.map(formatCount).join(' / ')} messages:`,
    );
    const full = series[0]!.rows
      .filter((row) => longSizes.includes(row.messages))
      .map((row) => formatCount(row.fullTokensPerRequest));
    for (const entry of series) {
      const cells = entry.rows
        .filter((row) => longSizes.includes(row.messages))
        .map((row) => `${formatCount(row.sentTokensPerRequest)} (${formatCount(row.netTokensPerRequest)})`);
      lines.push(`  ${entry.variant.padEnd(24)} ${cells.join(' / ')}`);
    }
    lines.push(`  ${'full history'.padEnd(24)} ${full.join(' / ')}`);
  }
  lines.push('settings:');
  for (const entry of series) lines.push(`  ${entry.variant.padEnd(24)} ${entry.description}`);
  return lines.join('\n');
}

/**
 * Renders the seed's own table ("full vs rolling summary") beside each variant's per-request saving at the
 * same sizes, net of summarizer tokens with the gross figure in brackets, and the issue's target verdict.
 */
export function formatSeedComparison(name: string, comparison: SeedComparison): string {
  const variants = Object.keys(comparison.rows[0]!.variants);
  const right = true;
  const columns = [
    { header: 'messages', right },
    { header: 'seed: full vs rolling summary', right },
    ...variants.map((variant) => ({ header: variant, right })),
  ];
  const rows = comparison.rows.map((row) => [
    formatCount(row.messages),
    `${row.seedSavedPercent}%`,
    ...variants.map((variant) => {
      const cell = row.variants[variant];
      return cell === undefined ? '' : `${formatPercent(cell.netSavedPercent)} (${formatPercent(cell.savedPercent)})`;
    }),
  ]);
  const describeChecks = (variant: string) =>
    (comparison.targets[variant] ?? [])
      .map(
        (check) =>
          `${formatPercent(check.netSavedPercent)} at ${check.messages}${check.met ? ' (met)' : ` (${check.shortByPoints.toFixed(1)} points short of ${check.seedSavedPercent}%)`}`,
      )
      .join(', ');
  const lines = [
    `seed vs mnemo on ${name} — saved per request at length N: NET of summarizer tokens (gross in brackets)`,
    '',
    formatTable(columns, rows),
    '',
    `target (${comparison.targetVariant} with the library's default settings, net, ≥ the seed at 30 and 50): ${comparison.targetMet ? 'MET' : 'NOT MET'} — ${describeChecks(comparison.targetVariant)}`,
  ];
  for (const variant of variants.filter((candidate) => candidate !== comparison.targetVariant))
    lines.push(`  ${variant}: ${describeChecks(variant)}`);
  return lines.join('\n');
}
