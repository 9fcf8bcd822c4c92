/** Hash routes of the inspector page: the client turns `#/x` into a request for `/inspect/fragments/x`. */

function segment(value: string): string {
  return encodeURIComponent(value);
}

function withQuery(path: string, query: Readonly<Record<string, string | number | undefined>> = {}): string {
  const parameters = new URLSearchParams();
  for (const [name, value] of Object.entries(query))
    if (value !== undefined && value !== '') parameters.set(name, String(value));
  const text = parameters.toString();
  return text === '' ? path : `${path}?${text}`;
}

/** The route of a view, without the leading `#` (for a form's `data-route` or a fragment request). */
export const inspectorRoutes = Object.freeze({
  conversations: (query?: { search?: string; user?: string; cursor?: string }) => withQuery('/conversations', query),
  conversation: (userId: string, conversationId: string, query?: { afterSeq?: number; seq?: number }) =>
    withQuery(`/conversation/${segment(userId)}/${segment(conversationId)}`, query),
  context: (userId: string, conversationId: string) => `/context/${segment(userId)}/${segment(conversationId)}`,
  savings: (userId: string, conversationId: string) => `/savings/${segment(userId)}/${segment(conversationId)}`,
  facts: (userId: string) => `/facts/${segment(userId)}`,
  summary: (userId: string, summaryId: string, offset?: number) =>
    withQuery(`/summary/${segment(userId)}/${segment(summaryId)}`, { offset: offset === 0 ? undefined : offset }),
  background: () => '/background',
});

/** An `href` for a link to a view. */
export function hashLink(route: string): string {
  return `#${route}`;
}
