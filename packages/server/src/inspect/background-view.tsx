import { jobKinds, type Job, type JobKindCount, type JobStatus } from '@mnemo/core';
import { DataTable } from './data-table.js';
import { hashLink, inspectorRoutes } from './inspector-links.js';
import { formatAge, formatCount, formatTime } from './inspector-text.js';

const statuses: readonly JobStatus[] = ['pending', 'running', 'done', 'failed'];

/** What the background view shows: the tenant's jobs by kind and status, and the newest failures. */
export interface BackgroundViewProps {
  readonly tenantId: string;
  readonly counts: readonly JobKindCount[];
  readonly failures: readonly Job[];
  /** Epoch ms the ages are measured at. */
  readonly now: number;
}

/** Background work of one tenant: jobs by kind and status, the age of the oldest pending job of each kind, the last failures with their errors. */
export function BackgroundView({ tenantId, counts, failures, now }: BackgroundViewProps) {
  const count = (kind: string, status: JobStatus) => counts.find((row) => row.kind === kind && row.status === status);
  return (
    <section data-view="background">
      <h1>Background</h1>
      <p class="sub">
        Jobs of tenant <code>{tenantId}</code>: compaction, fact and graph extraction, embedding. They run in workers,
        never on the request path.
      </p>
      {counts.length === 0 ? (
        <p class="state state-empty" data-empty>
          No background job yet: appending messages queues them.
        </p>
      ) : (
        <DataTable
          columns={[
            'Kind',
            ...statuses.map((status) => ({ label: status, numeric: true })),
            { label: 'Oldest pending', numeric: true },
          ]}
        >
          {jobKinds.map((kind) => {
            const pending = count(kind, 'pending');
            return (
              <tr data-kind={kind}>
                <td>{kind}</td>
                {statuses.map((status) => (
                  <td class="num" data-status={status}>
                    {formatCount(count(kind, status)?.count ?? 0)}
                  </td>
                ))}
                <td class="num" data-oldest-pending>
                  {pending === undefined ? '—' : formatAge(now - Date.parse(pending.oldestCreatedAt))}
                </td>
              </tr>
            );
          })}
        </DataTable>
      )}
      <h2>Last failures</h2>
      {failures.length === 0 ? (
        <p class="state state-empty">No job has failed.</p>
      ) : (
        <DataTable columns={['When', 'Kind', 'Conversation', 'Status', { label: 'Attempts', numeric: true }, 'Error']}>
          {failures.map((job) => (
            <tr data-job={job.id}>
              <td>{formatTime(job.updatedAt)}</td>
              <td>{job.kind}</td>
              <td>
                <a href={hashLink(inspectorRoutes.conversation(job.userId, job.conversationId))}>
                  {job.conversationId}
                </a>
                <div class="hint">{job.userId}</div>
              </td>
              <td>
                {job.status === 'failed' ? (
                  <span class="tag bad">given up</span>
                ) : (
                  <span class="tag warn">retry at {formatTime(job.runAt)}</span>
                )}
              </td>
              <td class="num">
                {job.attempts}/{job.maxAttempts}
              </td>
              <td class="content">{job.lastError}</td>
            </tr>
          ))}
        </DataTable>
      )}
    </section>
  );
}
