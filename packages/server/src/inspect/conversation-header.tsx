import { hashLink, inspectorRoutes } from './inspector-links.js';

/** Which of a conversation's views is open. */
export type ConversationTab = 'transcript' | 'context' | 'savings';

/** The title and the view switcher every view of one conversation starts with. */
export function ConversationHeader({
  userId,
  conversationId,
  tab,
}: {
  userId: string;
  conversationId: string;
  tab: ConversationTab;
}) {
  const current = (name: ConversationTab) => (name === tab ? { 'aria-current': 'page' as const } : {});
  return (
    <header>
      <p class="crumbs">
        <a href={hashLink(inspectorRoutes.conversations())}>Conversations</a> › user{' '}
        <a href={hashLink(inspectorRoutes.conversations({ user: userId }))}>{userId}</a>
      </p>
      <h1>{conversationId}</h1>
      <nav class="views" aria-label="Views of this conversation">
        <a href={hashLink(inspectorRoutes.conversation(userId, conversationId))} {...current('transcript')}>
          Transcript
        </a>
        <a href={hashLink(inspectorRoutes.context(userId, conversationId))} {...current('context')}>
          Next request
        </a>
        <a href={hashLink(inspectorRoutes.savings(userId, conversationId))} {...current('savings')}>
          Savings
        </a>
        <a href={hashLink(inspectorRoutes.facts(userId))}>Facts of {userId}</a>
      </nav>
    </header>
  );
}
