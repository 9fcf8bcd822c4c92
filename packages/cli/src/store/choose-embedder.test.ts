import { HashedEmbedder } from '@mnemo/core';
import { StaticEmbedder, UseLiteEmbedder } from '@mnemo/models';
import { describe, expect, it } from 'vitest';
import { loadCliConfig } from '../config/cli-config.js';
import { chooseEmbedder, oneUserQueryDeadline } from './choose-embedder.js';

describe('chooseEmbedder', () => {
  it('gives the static table by default and USE-lite for MNEMO_EMBEDDER=use-lite', async () => {
    const byDefault = chooseEmbedder(await loadCliConfig({ env: {}, cwd: '/nonexistent' }));
    expect(byDefault).toBeInstanceOf(StaticEmbedder);
    expect(byDefault?.model).toMatch(/^static-use-lite-64@[0-9a-f]{8}$/);
    expect(
      chooseEmbedder(await loadCliConfig({ env: { MNEMO_EMBEDDER: 'use-lite' }, cwd: '/nonexistent' })),
    ).toBeInstanceOf(UseLiteEmbedder);
  });

  it("gives core's HashedEmbedder for MNEMO_EMBEDDER=hashed, 256 dimensions unless set", async () => {
    const plain = chooseEmbedder(await loadCliConfig({ env: { MNEMO_EMBEDDER: 'hashed' }, cwd: '/nonexistent' }));
    expect(plain).toBeInstanceOf(HashedEmbedder);
    expect(plain?.model).toBe('hashed-bow-256');
    const small = chooseEmbedder(
      await loadCliConfig({ env: { MNEMO_EMBEDDER: 'hashed', MNEMO_EMBEDDING_DIMENSIONS: '32' }, cwd: '/nonexistent' }),
    );
    expect((await small!.embed(['relay on the ridge']))[0]).toHaveLength(32);
  });

  it('gives none for MNEMO_EMBEDDER=none', async () => {
    expect(
      chooseEmbedder(await loadCliConfig({ env: { MNEMO_EMBEDDER: 'none' }, cwd: '/nonexistent' })),
    ).toBeUndefined();
  });
});

describe('oneUserQueryDeadline (chat, mcp)', () => {
  const config = (env: Record<string, string>) => loadCliConfig({ env, cwd: '/nonexistent' });
  const endpoint = { MNEMO_EMBEDDER: 'openai', MNEMO_EMBEDDING_MODEL: 'text-embedding-3-small' };

  it('waits for an in-process model and cuts off an endpoint, which can stall, or a refiner thread', async () => {
    expect(oneUserQueryDeadline(await config({ MNEMO_EMBEDDER: 'use-lite' }), false)).toBe(false);
    expect(oneUserQueryDeadline(await config({}), true)).toBe(30);
    expect(oneUserQueryDeadline(await config(endpoint), false)).toBe(1000);
    expect(oneUserQueryDeadline(await config({ ...endpoint, MNEMO_QUERY_EMBEDDING_TIMEOUT_MS: '400' }), false)).toBe(
      400,
    );
  });
});
