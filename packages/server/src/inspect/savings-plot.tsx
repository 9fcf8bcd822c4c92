import type { UsageEntry } from '@mnemo/core';
import { formatCount, formatTime } from './inspector-text.js';

const width = 800;
const height = 280;
// The left margin holds the y labels also at the larger font of a narrow screen (inspector-style.ts).
const margin = { top: 16, right: 16, bottom: 36, left: 112 };

/**
 * The ledger as an SVG plot: per context request (x, in ledger order) the tokens sent and the tokens the
 * full history would have cost; each compaction as a bar of its own cost where it happened between requests.
 */
export function SavingsPlot({ entries }: { entries: readonly UsageEntry[] }) {
  const requests = entries.filter((entry) => entry.kind === 'context');
  // Compactions between the same two requests stand side by side (`nth`), not on top of each other.
  const compactions: { x: number; nth: number; cost: number; entry: UsageEntry }[] = [];
  let seen = 0;
  let nth = 0;
  for (const entry of entries) {
    if (entry.kind === 'context') {
      seen += 1;
      nth = 0;
    } else
      compactions.push({
        x: seen - 0.5,
        nth: nth++,
        cost: (entry.inputTokens ?? 0) + (entry.outputTokens ?? 0),
        entry,
      });
  }
  const top = Math.max(
    1,
    ...requests.map((entry) => Math.max(entry.sentTokens, entry.fullHistoryTokens)),
    ...compactions.map((bar) => bar.cost),
  );
  const plotWidth = width - margin.left - margin.right;
  const plotHeight = height - margin.top - margin.bottom;
  // Each request owns a slot of equal width with its point in the middle, so a compaction before the
  // first request or after the last still has room at the plot's edge.
  const xOf = (index: number) => margin.left + ((index + 0.5) / Math.max(1, requests.length)) * plotWidth;
  const groups = new Map<number, number>();
  for (const bar of compactions) groups.set(bar.x, (groups.get(bar.x) ?? 0) + 1);
  const groupSize = (x: number) => groups.get(x) ?? 1;
  const yOf = (tokens: number) => margin.top + plotHeight - (tokens / top) * plotHeight;
  const line = (pick: (entry: UsageEntry) => number) =>
    requests.map((entry, index) => `${xOf(index).toFixed(1)},${yOf(pick(entry)).toFixed(1)}`).join(' ');
  const barWidth = Math.max(2, Math.min(10, plotWidth / Math.max(requests.length, 1) / 4));
  const first = requests[0];
  const last = requests.at(-1);
  return (
    <svg
      class="plot"
      viewBox={`0 0 ${width} ${height}`}
      role="img"
      aria-label="Tokens sent per request against the full-history cost"
      data-plot
    >
      {[0, 0.5, 1].map((share) => (
        <>
          <line class="axis" x1={margin.left} x2={width - margin.right} y1={yOf(top * share)} y2={yOf(top * share)} />
          <text x={margin.left - 8} y={yOf(top * share) + 4} text-anchor="end">
            {formatCount(Math.round(top * share))}
          </text>
        </>
      ))}
      {compactions.map((bar) => (
        <rect
          class="compaction"
          data-compaction={bar.entry.position}
          x={xOf(bar.x) - barWidth / 2 + (bar.nth - (groupSize(bar.x) - 1) / 2) * (barWidth + 1)}
          y={yOf(bar.cost)}
          width={barWidth}
          height={Math.max(1, margin.top + plotHeight - yOf(bar.cost))}
        >
          <title>
            compaction by {bar.entry.policy}: {formatCount(bar.cost)} tokens ({formatTime(bar.entry.createdAt)})
          </title>
        </rect>
      ))}
      <polyline class="line-full" points={line((entry) => entry.fullHistoryTokens)} />
      <polyline class="line-sent" points={line((entry) => entry.sentTokens)} />
      {requests.map((entry, index) => (
        <circle
          class="point-sent"
          data-point={entry.position}
          data-sent={entry.sentTokens}
          cx={xOf(index)}
          cy={yOf(entry.sentTokens)}
          r={requests.length > 200 ? 1.5 : 3}
        >
          <title>
            request {index + 1} ({entry.policy}, {formatTime(entry.createdAt)}): sent {formatCount(entry.sentTokens)},
            full history {formatCount(entry.fullHistoryTokens)}
          </title>
        </circle>
      ))}
      <text x={xOf(0)} y={height - 12}>
        {first === undefined ? '' : `#1 · ${formatTime(first.createdAt)}`}
      </text>
      <text x={xOf(requests.length - 1)} y={height - 12} text-anchor="end">
        {last === undefined || requests.length === 1 ? '' : `#${requests.length} · ${formatTime(last.createdAt)}`}
      </text>
    </svg>
  );
}
