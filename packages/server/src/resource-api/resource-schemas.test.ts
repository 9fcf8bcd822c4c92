import { createMemory } from '@mnemo/core';
import { InMemoryStore } from '@mnemo/core/testing';
import { describe, expect, it } from 'vitest';
import { conversationSchema, conversationStatsSchema } from './resource-schemas.js';

describe('conversation response schemas', () => {
  it('accept what Memory returns for a conversation before and after its metadata is set', async () => {
    const memory = createMemory({ store: new InMemoryStore(), knowledge: false, compaction: false });
    const scope = { conversationId: 'node-7' };
    await memory.append(scope, [
      { role: 'user', content: 'battery?' },
      { role: 'assistant', content: '71%' },
    ]);
    const before: unknown = JSON.parse(JSON.stringify(await memory.stats(scope)));
    expect(conversationStatsSchema.parse(before)).toMatchObject({ roles: { user: 1, assistant: 1 } });
    expect(conversationStatsSchema.parse(before).metadata).toBeUndefined();
    const updated: unknown = JSON.parse(
      JSON.stringify(await memory.updateConversation(scope, { metadata: { memory_type: 'buffer', tags: ['relay'] } })),
    );
    expect(conversationSchema.parse(updated).metadata).toEqual({ memory_type: 'buffer', tags: ['relay'] });
    const after: unknown = JSON.parse(JSON.stringify(await memory.stats(scope)));
    expect(conversationStatsSchema.parse(after)).toMatchObject({
      metadata: { memory_type: 'buffer' },
      roles: { user: 1, assistant: 1 },
    });
    await memory.close();
  });

  it('refuse role counts of an unknown role or a fractional count, and metadata that is not an object', () => {
    const base = {
      tenantId: 't',
      userId: 'u',
      conversationId: 'c',
      createdAt: 'x',
      updatedAt: 'x',
      messageCount: 1,
      totalTokens: 1,
      summarizedThroughSeq: 0,
      summarizedTokens: 0,
    };
    const usage = {
      requests: 0,
      sentTokens: 0,
      fullHistoryTokens: 0,
      savedTokens: 0,
      compactions: 0,
      summarizerInputTokens: 0,
      summarizerOutputTokens: 0,
      netSavedTokens: 0,
    };
    const stats = { ...base, firstMessageAt: 'x', lastMessageAt: 'x', usage };
    expect(conversationStatsSchema.safeParse({ ...stats, roles: {} }).success).toBe(true);
    expect(conversationStatsSchema.safeParse({ ...stats, roles: { robot: 1 } }).success).toBe(false);
    expect(conversationStatsSchema.safeParse({ ...stats, roles: { user: 1.5 } }).success).toBe(false);
    expect(conversationSchema.safeParse({ ...base, metadata: ['a'] }).success).toBe(false);
  });
});
