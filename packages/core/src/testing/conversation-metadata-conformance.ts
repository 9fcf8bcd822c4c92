import { describe, expect, it } from 'vitest';
import { isMemoryError } from '../errors/memory-error.js';
import type { Metadata } from '../messages/message.js';
import type { Scope } from '../messages/scope.js';
import type { Store } from '../store/store.js';
import { makeNewMessage, scopeA } from './conformance-fixtures.js';
import { makeNewSummary } from './summary-conformance.js';

const isInvalidInput = (error: unknown) => isMemoryError(error, 'invalid_input');

/** Conversation metadata and per-role counts in the store conformance suite: replace, read back, isolation, limits, erase. */
export function describeConversationMetadataConformance(store: () => Store): void {
  describe('conversation metadata', () => {
    it('reads back metadata set on a conversation through getConversation and listConversations', async () => {
      await store().appendMessages(scopeA, [makeNewMessage('hi')]);
      expect((await store().getConversation(scopeA))?.metadata).toBeUndefined();
      const metadata = {
        memory_type: 'summary',
        node: { id: '!a1b2', hops: 3, tags: ['relay', 'ünïcødé 🚀'] },
        pinned: true,
        note: null,
        ratio: 0.25,
      };
      const updated = await store().updateConversationMetadata(scopeA, metadata);
      expect(updated).toMatchObject({ ...scopeA, messageCount: 1, metadata });
      expect(await store().getConversation(scopeA)).toEqual(updated);
      const listed = await store().listConversations({ tenantId: scopeA.tenantId });
      expect(listed.items.map((conversation) => conversation.metadata)).toEqual([metadata]);
    });

    it('replaces the whole object when updated again, leaving counters and updatedAt alone', async () => {
      await store().appendMessages(scopeA, [makeNewMessage('abc')]);
      const before = await store().getConversation(scopeA);
      await store().updateConversationMetadata(scopeA, { memory_type: 'buffer', kept: 1 });
      const updated = await store().updateConversationMetadata(scopeA, { memory_type: 'window' });
      expect(updated?.metadata).toEqual({ memory_type: 'window' });
      expect(updated).toEqual({ ...before, metadata: { memory_type: 'window' } });
      expect((await store().updateConversationMetadata(scopeA, {}))?.metadata).toEqual({});
    });

    it('keeps metadata through later appends and compaction, and stores a copy of what it was given', async () => {
      await store().appendMessages(scopeA, [makeNewMessage('one'), makeNewMessage('two')]);
      const metadata: Record<string, unknown> = { memory_type: 'summary' };
      await store().updateConversationMetadata(scopeA, metadata);
      metadata['memory_type'] = 'changed after the call';
      await store().appendMessages(scopeA, [makeNewMessage('three')]);
      await store().insertSummary(scopeA, makeNewSummary(2), { expectedWatermark: 0 });
      expect(await store().getConversation(scopeA)).toMatchObject({
        messageCount: 3,
        summarizedThroughSeq: 2,
        metadata: { memory_type: 'summary' },
      });
    });

    it('returns undefined and creates nothing for a conversation that does not exist', async () => {
      expect(await store().updateConversationMetadata(scopeA, { memory_type: 'buffer' })).toBeUndefined();
      expect(await store().getConversation(scopeA)).toBeUndefined();
      expect((await store().listConversations({ tenantId: scopeA.tenantId })).items).toEqual([]);
      await store().appendMessages(scopeA, [makeNewMessage('first')]);
      expect((await store().getConversation(scopeA))?.metadata).toBeUndefined();
    });

    it('touches only its own tenant and user when another has the same conversation id', async () => {
      const otherTenant: Scope = { ...scopeA, tenantId: 'tenant-b' };
      const otherUser: Scope = { ...scopeA, userId: 'user-2' };
      await store().appendMessages(scopeA, [makeNewMessage('a')]);
      await store().appendMessages(otherUser, [makeNewMessage('b')]);
      expect(await store().updateConversationMetadata(otherTenant, { owner: 'tenant-b' })).toBeUndefined();
      await store().updateConversationMetadata(scopeA, { owner: 'user-1' });
      expect((await store().getConversation(otherUser))?.metadata).toBeUndefined();
      expect(await store().getConversation(otherTenant)).toBeUndefined();
      await store().updateConversationMetadata(otherUser, { owner: 'user-2' });
      expect((await store().getConversation(scopeA))?.metadata).toEqual({ owner: 'user-1' });
      const listed = await store().listConversations({ tenantId: scopeA.tenantId });
      expect(listed.items.map((conversation) => [conversation.userId, conversation.metadata])).toEqual([
        ['user-1', { owner: 'user-1' }],
        ['user-2', { owner: 'user-2' }],
      ]);
    });

    it('accepts 16,384 characters of JSON and refuses one more, or anything but a plain JSON object, as invalid input', async () => {
      await store().appendMessages(scopeA, [makeNewMessage('hi')]);
      const padding = 16_384 - JSON.stringify({ a: '' }).length;
      expect((await store().updateConversationMetadata(scopeA, { a: 'x'.repeat(padding) }))?.metadata).toEqual({
        a: 'x'.repeat(padding),
      });
      const refused: unknown[] = [
        { a: 'x'.repeat(padding + 1) },
        [1, 2],
        null,
        'text',
        7,
        new Map([['a', 1]]),
        { nul: 'a\u0000b' },
        { cyclic: undefined as unknown },
      ];
      (refused.at(-1) as { cyclic: unknown }).cyclic = refused.at(-1);
      for (const metadata of refused) {
        await expect(store().updateConversationMetadata(scopeA, metadata as Metadata)).rejects.toSatisfy(
          isInvalidInput,
        );
      }
      // Validation comes first: bad input is refused even for a conversation that does not exist.
      await expect(
        store().updateConversationMetadata({ ...scopeA, conversationId: 'absent' }, [1] as unknown as Metadata),
      ).rejects.toSatisfy(isInvalidInput);
      expect((await store().getConversation(scopeA))?.metadata).toEqual({ a: 'x'.repeat(padding) });
    });

    it('is gone with an erased conversation, which starts over without metadata', async () => {
      await store().appendMessages(scopeA, [makeNewMessage('hi')]);
      await store().updateConversationMetadata(scopeA, { memory_type: 'buffer' });
      await store().deleteConversation(scopeA);
      expect(await store().updateConversationMetadata(scopeA, { memory_type: 'late' })).toBeUndefined();
      await store().appendMessages(scopeA, [makeNewMessage('again')]);
      expect((await store().getConversation(scopeA))?.metadata).toBeUndefined();
    });
  });

  describe('messages by role', () => {
    it('counts stored messages of each role, leaving out roles without messages', async () => {
      const toolCalls = [{ id: 'call_1', type: 'function' as const, function: { name: 'weather', arguments: '{}' } }];
      await store().appendMessages(scopeA, [makeNewMessage('q1'), makeNewMessage('a1', { role: 'assistant' })]);
      await store().appendMessages(scopeA, [
        makeNewMessage('', { role: 'assistant', toolCalls }),
        makeNewMessage('{"temp":4}', { role: 'tool', toolCallId: 'call_1' }),
        makeNewMessage('q2'),
        makeNewMessage('a2', { role: 'assistant' }),
      ]);
      expect(await store().countMessagesByRole(scopeA)).toEqual({ user: 2, assistant: 3, tool: 1 });
      await store().appendMessages(scopeA, [
        makeNewMessage('be brief', { role: 'system' }),
        makeNewMessage('q2', { idempotencyKey: 'k' }),
        makeNewMessage('q2', { idempotencyKey: 'k' }),
      ]);
      expect(await store().countMessagesByRole(scopeA)).toEqual({ system: 1, user: 3, assistant: 3, tool: 1 });
    });

    it('counts only the conversation of its own tenant and user, and nothing for an unknown or erased one', async () => {
      await store().appendMessages(scopeA, [makeNewMessage('a'), makeNewMessage('b', { role: 'assistant' })]);
      await store().appendMessages({ ...scopeA, userId: 'user-2' }, [makeNewMessage('c')]);
      await store().appendMessages({ ...scopeA, tenantId: 'tenant-b' }, [makeNewMessage('d', { role: 'assistant' })]);
      expect(await store().countMessagesByRole({ ...scopeA, userId: 'user-2' })).toEqual({ user: 1 });
      expect(await store().countMessagesByRole({ ...scopeA, tenantId: 'tenant-b' })).toEqual({ assistant: 1 });
      expect(await store().countMessagesByRole({ ...scopeA, conversationId: 'never-written' })).toEqual({});
      await store().deleteConversation(scopeA);
      expect(await store().countMessagesByRole(scopeA)).toEqual({});
      expect(await store().countMessagesByRole({ ...scopeA, userId: 'user-2' })).toEqual({ user: 1 });
    });
  });
}
