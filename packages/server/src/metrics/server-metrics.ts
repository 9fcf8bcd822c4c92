import type { ContextRecallReport, JobBacklogStatus } from '@mnemo/core';

/** Upper bounds of the request-latency histogram, in seconds. */
export const latencyBucketsSeconds = Object.freeze([
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
]);

/** What one context build sent, for the token counters. */
export interface ContextUsage {
  readonly policy: string;
  readonly sentTokens: number;
  readonly fullHistoryTokens: number;
  /** How a hybrid context recalled: counted by mode and reason, so keyword-only fallbacks at the query-embedding deadline show. */
  readonly recall?: ContextRecallReport;
}

/** The server's instruments, rendered as Prometheus text on `/metrics`. */
export interface ServerMetrics {
  /** Counts a finished request and its latency; `route` is the route template, never the raw path. */
  observeRequest(labels: { method: string; route: string; status: number }, durationSeconds: number): void;
  /** Adds a context build's sent, full-history and saved tokens (the proxy calls it too). */
  recordContext(usage: ContextUsage): void;
  /** Adds the prompt, cached and cache-write tokens an upstream reported for one proxied request, by model. */
  recordUpstreamCache(
    model: string,
    usage: { readonly inputTokens: number; readonly cachedInputTokens: number; readonly cacheWriteInputTokens: number },
  ): void;
  /**
   * The Prometheus text exposition (format 0.0.4); `backlog` adds the job-queue gauges: jobs by status, the
   * pending and running jobs per kind and the oldest pending job's age.
   */
  render(backlog?: JobBacklogStatus): string;
}

interface Histogram {
  readonly buckets: number[];
  count: number;
  sum: number;
}

/** Creates empty {@link ServerMetrics}; counters live in the process and reset when it restarts. */
export function createServerMetrics(): ServerMetrics {
  const requests = new Map<string, number>();
  const latencies = new Map<string, Histogram>();
  const context = new Map<string, { builds: number; sent: number; full: number; saved: number }>();
  const recalls = new Map<string, number>();
  const upstreamCache = new Map<string, { prompt: number; cached: number; written: number; reported: number }>();
  return {
    recordUpstreamCache(model, usage) {
      const key = labelText({ model });
      const entry = upstreamCache.get(key) ?? { prompt: 0, cached: 0, written: 0, reported: 0 };
      entry.prompt += usage.inputTokens;
      entry.cached += usage.cachedInputTokens;
      entry.written += usage.cacheWriteInputTokens;
      entry.reported += 1;
      upstreamCache.set(key, entry);
    },
    observeRequest({ method, route, status }, durationSeconds) {
      const requestKey = labelText({ method, route, status: String(status) });
      requests.set(requestKey, (requests.get(requestKey) ?? 0) + 1);
      const latencyKey = labelText({ method, route });
      const histogram = latencies.get(latencyKey) ?? { buckets: latencyBucketsSeconds.map(() => 0), count: 0, sum: 0 };
      latencyBucketsSeconds.forEach((bound, index) => {
        if (durationSeconds <= bound) histogram.buckets[index] = (histogram.buckets[index] ?? 0) + 1;
      });
      histogram.count += 1;
      histogram.sum += durationSeconds;
      latencies.set(latencyKey, histogram);
    },
    recordContext({ policy, sentTokens, fullHistoryTokens, recall }) {
      if (recall !== undefined) {
        const recallKey = labelText({
          mode: recall.mode,
          reason: recall.reason ?? 'none',
          ...(recall.model === undefined ? {} : { model: recall.model }),
        });
        recalls.set(recallKey, (recalls.get(recallKey) ?? 0) + 1);
      }
      const entry = context.get(policy) ?? { builds: 0, sent: 0, full: 0, saved: 0 };
      entry.builds += 1;
      entry.sent += sentTokens;
      entry.full += fullHistoryTokens;
      entry.saved += Math.max(0, fullHistoryTokens - sentTokens);
      context.set(policy, entry);
    },
    render(backlog) {
      const lines: string[] = [];
      family(lines, 'mnemo_http_requests_total', 'counter', 'HTTP requests by method, route template and status.');
      for (const [labels, value] of requests) lines.push(`mnemo_http_requests_total{${labels}} ${value}`);
      family(
        lines,
        'mnemo_http_request_duration_seconds',
        'histogram',
        'HTTP request latency by method and route template, in seconds.',
      );
      for (const [labels, histogram] of latencies) {
        latencyBucketsSeconds.forEach((bound, index) => {
          lines.push(
            `mnemo_http_request_duration_seconds_bucket{${labels},le="${bound}"} ${histogram.buckets[index] ?? 0}`,
          );
        });
        lines.push(`mnemo_http_request_duration_seconds_bucket{${labels},le="+Inf"} ${histogram.count}`);
        lines.push(`mnemo_http_request_duration_seconds_sum{${labels}} ${histogram.sum}`);
        lines.push(`mnemo_http_request_duration_seconds_count{${labels}} ${histogram.count}`);
      }
      const cacheFamilies = [
        [
          'mnemo_upstream_prompt_tokens_total',
          'Prompt tokens the upstream reported for proxied requests, by model.',
          'prompt',
        ],
        [
          'mnemo_upstream_cached_tokens_total',
          'Prompt tokens the upstream read from its prompt cache (its own figure), by model.',
          'cached',
        ],
        [
          'mnemo_upstream_cache_write_tokens_total',
          'Prompt tokens the upstream wrote to its prompt cache (Anthropic-style), by model.',
          'written',
        ],
        ['mnemo_upstream_cache_reports_total', 'Proxied requests whose upstream reported usage, by model.', 'reported'],
      ] as const;
      for (const [name, help, field] of cacheFamilies) {
        family(lines, name, 'counter', help);
        for (const [labels, entry] of upstreamCache) lines.push(`${name}{${labels}} ${entry[field]}`);
      }
      const contextFamilies = [
        ['mnemo_context_builds_total', 'Contexts built, by policy.', 'builds'],
        ['mnemo_context_sent_tokens_total', 'Tokens of the contexts built, by policy.', 'sent'],
        [
          'mnemo_context_full_history_tokens_total',
          'Tokens the same requests would have cost with the whole history, by policy.',
          'full',
        ],
        ['mnemo_context_saved_tokens_total', 'Full-history tokens minus sent tokens, by policy.', 'saved'],
      ] as const;
      for (const [name, help, field] of contextFamilies) {
        family(lines, name, 'counter', help);
        for (const [policy, entry] of context) lines.push(`${name}{${labelText({ policy })}} ${entry[field]}`);
      }
      family(
        lines,
        'mnemo_context_recall_total',
        'counter',
        'Hybrid contexts by how they recalled: hybrid (and the model whose vectors ranked: the refiner where it could), keyword-only and why (no_embedder, embedding_deadline, embedder_failed), or skipped (not_asked: the turn asked nothing).',
      );
      for (const [labels, value] of recalls) lines.push(`mnemo_context_recall_total{${labels}} ${value}`);
      if (backlog !== undefined) {
        family(lines, 'mnemo_jobs', 'gauge', 'Background jobs in the store, by status (all tenants).');
        for (const [status, count] of Object.entries(backlog.byStatus))
          lines.push(`mnemo_jobs{${labelText({ status })}} ${count}`);
        renderBacklog(lines, backlog);
      }
      return `${lines.join('\n')}\n`;
    },
  };
}

function renderBacklog(lines: string[], backlog: JobBacklogStatus): void {
  family(
    lines,
    'mnemo_job_backlog',
    'gauge',
    'Background jobs not done yet, by kind and state (pending: waiting or retrying later; running: leased now), all tenants.',
  );
  for (const [kind, counts] of Object.entries(backlog.byKind)) {
    lines.push(`mnemo_job_backlog{${labelText({ kind, state: 'pending' })}} ${counts.pending}`);
    lines.push(`mnemo_job_backlog{${labelText({ kind, state: 'running' })}} ${counts.running}`);
  }
  family(
    lines,
    'mnemo_job_oldest_pending_age_seconds',
    'gauge',
    'How long the oldest pending background job has waited, in seconds; 0 when none is pending.',
  );
  lines.push(`mnemo_job_oldest_pending_age_seconds ${(backlog.oldestPendingAgeMs ?? 0) / 1000}`);
}

function family(lines: string[], name: string, type: string, help: string): void {
  lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
}

function labelText(labels: Readonly<Record<string, string>>): string {
  return Object.entries(labels)
    .map(([name, value]) => `${name}="${value.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"')}"`)
    .join(',');
}
