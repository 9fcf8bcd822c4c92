import { request } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMemory, type Memory } from '@mnemo/core';
import { createSqliteStore } from '@mnemo/sqlite';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServerApp, startServer, type RunningServer } from '../index.js';

let server: RunningServer;
let memory: Memory;
let directory: string;

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'mnemo-header-text-'));
  memory = createMemory({
    store: createSqliteStore({ path: join(directory, 'mnemo.db') }),
    compaction: false,
    knowledge: false,
  });
  server = await startServer({
    app: createServerApp({ memory, logger: pino({ level: 'silent' }), limits: { rateLimit: false } }),
    port: 0,
  });
});

afterAll(async () => {
  await server.close();
  await rm(directory, { recursive: true, force: true });
});

/** A raw HTTP request whose X-Mnemo-User header carries exactly `userBytes`: what curl (UTF-8) or a fetch() client (Latin-1) puts on the wire. */
function append(conversationId: string, userBytes: Buffer, content: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify({ messages: [{ role: 'user', content }] });
    // Node writes a header string one byte per char (Latin-1): this string is the bytes, as they are.
    const outgoing = request(`${server.url}/v1/conversations/${conversationId}/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-mnemo-user': userBytes.toString('latin1') },
    });
    outgoing.on('response', (response) => {
      let text = '';
      response.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: text }));
    });
    outgoing.on('error', reject);
    // A Buffer body: with a string body Node would write the header block in the body's encoding (UTF-8) too.
    outgoing.end(Buffer.from(body, 'utf8'));
  });
}

describe('id headers on the wire', () => {
  it('reads a UTF-8 X-Mnemo-User as UTF-8 and a Latin-1 one as Latin-1: both name user café, as a JSON body does', async () => {
    expect((await append('node-1', Buffer.from('café', 'utf8'), 'sent by curl')).status).toBe(201);
    expect((await append('node-2', Buffer.from('café', 'latin1'), 'sent by fetch')).status).toBe(201);
    expect((await append('node-3', Buffer.from('Müller-東京', 'utf8'), 'four-byte free, three-byte CJK')).status).toBe(
      201,
    );

    const cafe = await memory.listConversations({ tenantId: 'default', userId: 'café' });
    expect(cafe.items.map((conversation) => conversation.conversationId).sort()).toEqual(['node-1', 'node-2']);
    const tokyo = await memory.listConversations({ tenantId: 'default', userId: 'Müller-東京' });
    expect(tokyo.items.map((conversation) => conversation.conversationId)).toEqual(['node-3']);
    // Nothing was stored under the mis-decoded id.
    expect((await memory.listConversations({ tenantId: 'default', userId: 'cafÃ©' })).items).toEqual([]);
  });
});
