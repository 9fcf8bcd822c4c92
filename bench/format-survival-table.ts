import { formatCount, formatTable } from '../packages/cli/dist/output/format-table.js';
import type { SurvivalResult } from './replay-fact-survival.js';

/** Renders the survival results: one row per variant (facts kept, summary size, compaction cost), then one row per fact (kept or when it was last seen). */
export function formatSurvivalTables(results: readonly SurvivalResult[]): string {
  const right = true;
  const summaryColumns = [
    { header: 'policy' },
    { header: 'kept', right },
    { header: 'asked: hybrid', right },
    { header: 'asked: summary', right },
    { header: 'lost' },
    { header: 'summary', right },
    { header: 'block', right },
    { header: 'final sent / full', right },
    { header: 'calls (condense)', right },
    { header: 'prompt in min / mean / max', right },
    { header: 'output min / mean / max', right },
    { header: 'Σ summarizer', right },
  ];
  const summaryRows = results.map((result) => [
    result.variant,
    `${result.keptCount}/${result.facts.length}`,
    `${result.answeredHybridCount}/${result.facts.length}`,
    `${result.answeredSummaryCount}/${result.facts.length}`,
    result.facts
      .filter((fact) => !fact.kept)
      .map((fact) => (fact.kind === 'date' ? `date ${fact.value}` : fact.kind))
      .join(', ') || '—',
    formatCount(result.summaryTokens),
    formatCount(result.summaryBlockTokens),
    `${formatCount(result.finalSentTokens)} / ${formatCount(result.finalFullHistoryTokens)}`,
    `${formatCount(result.compactions)} (${formatCount(result.condensations)})`,
    `${formatCount(result.promptTokens.min)} / ${formatCount(result.promptTokens.mean)} / ${formatCount(result.promptTokens.max)}`,
    `${formatCount(result.outputTokens.min)} / ${formatCount(result.outputTokens.mean)} / ${formatCount(result.outputTokens.max)}`,
    formatCount(result.totalSummarizerTokens),
  ]);
  const factColumns = [
    { header: 'fact' },
    { header: 'value' },
    { header: 'turn', right },
    ...results.map((result) => ({ header: result.variant })),
  ];
  const factRows = results[0]!.facts.map((fact, index) => [
    fact.kind,
    fact.value,
    String(fact.plantedAtTurn),
    ...results.map((result) => {
      const outcome = result.facts[index]!;
      const asked = outcome.answeredHybrid ? ', asked: hybrid ✓' : ', asked: hybrid ✗';
      if (outcome.kept) return `kept (${outcome.foundIn})${asked}`;
      return (
        (outcome.lastSeenAtTurn === 0 ? 'never in a context' : `lost after turn ${outcome.lastSeenAtTurn}`) + asked
      );
    }),
  ]);
  return [formatTable(summaryColumns, summaryRows), '', formatTable(factColumns, factRows)].join('\n');
}
