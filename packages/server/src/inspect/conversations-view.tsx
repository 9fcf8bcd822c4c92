import type { Conversation, Page } from '@mnemo/core';
import { DataTable } from './data-table.js';
import { hashLink, inspectorRoutes } from './inspector-links.js';
import { formatCount, formatTime } from './inspector-text.js';

/** What the conversation list shows: one page of the tenant's conversations and the filter that chose it. */
export interface ConversationsViewProps {
  readonly tenantId: string;
  readonly page: Page<Conversation>;
  readonly search?: string;
  readonly user?: string;
  readonly cursor?: string;
}

/** The tenant's conversations, searchable by id text and filterable by user, one cursor page at a time. */
export function ConversationsView({ tenantId, page, search, user, cursor }: ConversationsViewProps) {
  const filtered = search !== undefined || user !== undefined;
  return (
    <section data-view="conversations">
      <h1>Conversations</h1>
      <p class="sub">
        Tenant <code>{tenantId}</code>. Messages and tokens as stored; "summarized through" is the seq the newest
        summary covers.
      </p>
      <form class="bar" data-route={inspectorRoutes.conversations()} role="search">
        <label>
          Search ids
          <input type="search" name="search" value={search ?? ''} placeholder="conversation or user id contains…" />
        </label>
        <label>
          User
          <input type="text" name="user" value={user ?? ''} placeholder="any user" />
        </label>
        <button type="submit">Search</button>
        {filtered ? <a href={hashLink(inspectorRoutes.conversations())}>Clear</a> : null}
      </form>
      {page.items.length === 0 ? (
        <p class="state state-empty" data-empty>
          {filtered || cursor !== undefined
            ? 'No conversation matches this search.'
            : 'No conversations yet. Append messages through the API, the proxy or MCP and they appear here.'}
        </p>
      ) : (
        <>
          <p class="hint narrow-only" data-narrow-hint>
            On a narrow screen the table shows user, conversation, messages and last activity; tokens and how far the
            summary reaches are on each conversation's page.
          </p>
          <DataTable
            columns={[
              'User',
              'Conversation',
              { label: 'Messages', numeric: true },
              { label: 'Tokens', numeric: true, hideNarrow: true },
              { label: 'Summarized through', numeric: true, hideNarrow: true },
              'Last activity',
            ]}
          >
            {page.items.map((conversation) => (
              <tr data-conversation={conversation.conversationId} data-user={conversation.userId}>
                <td>
                  <a href={hashLink(inspectorRoutes.facts(conversation.userId))} title="facts of this user">
                    {conversation.userId}
                  </a>
                </td>
                <td>
                  <a href={hashLink(inspectorRoutes.conversation(conversation.userId, conversation.conversationId))}>
                    {conversation.conversationId}
                  </a>
                </td>
                <td class="num" data-message-count>
                  {formatCount(conversation.messageCount)}
                </td>
                <td class="num hide-narrow">{formatCount(conversation.totalTokens)}</td>
                <td class="num hide-narrow">
                  {conversation.summarizedThroughSeq === 0
                    ? '—'
                    : `seq ${formatCount(conversation.summarizedThroughSeq)}`}
                </td>
                <td class="when">{formatTime(conversation.updatedAt)}</td>
              </tr>
            ))}
          </DataTable>
        </>
      )}
      <p class="pager">
        {cursor === undefined ? null : (
          <a href={hashLink(inspectorRoutes.conversations({ search, user }))}>← First page</a>
        )}
        {page.nextCursor === undefined ? null : (
          <a data-next-page href={hashLink(inspectorRoutes.conversations({ search, user, cursor: page.nextCursor }))}>
            Next page →
          </a>
        )}
      </p>
    </section>
  );
}
