import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { join } from 'node:path';
import { createSqliteStore } from '@mnemo/sqlite';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  currentHash,
  launchInspectorBrowser,
  missingChromium,
  showView,
  type InspectorBrowser,
  type InspectorTab,
} from './inspector-browser.js';
import { inspectorSeed as seed, seedInspectorStore } from './inspector-seed.js';
import { cliPath, makeWorkDirectory } from './run-mnemo.js';

const missing = missingChromium();
const inCi = process.env['CI'] === 'true';
const scope = { tenantId: seed.tenant, userId: seed.user, conversationId: seed.conversation };

let work: { path: string; remove: () => Promise<void> };
let serve: ChildProcessWithoutNullStreams | undefined;
let url: string;
let db: string;
let browser: InspectorBrowser;

/** What the page functions below read of a DOM element (the tests are typed without the DOM library). */
interface PageElement {
  getAttribute(name: string): string | null;
  querySelector(selectors: string): PageElement | null;
  readonly firstChild: { readonly textContent: string | null } | null;
}

/** Starts the built `mnemo serve` on the seeded file with one key per tenant; resolves with its URL. */
async function startServe(): Promise<string> {
  const child = spawn(process.execPath, [cliPath, 'serve', '--port', '0', '--db', db], {
    cwd: work.path,
    env: {
      PATH: process.env['PATH'] ?? '',
      HOME: work.path,
      MNEMO_EMBEDDER: 'hashed',
      MNEMO_API_KEYS: `${seed.key}:${seed.tenant},${seed.otherKey}:${seed.otherTenant}`,
    },
  });
  serve = child;
  let stdout = '';
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise<string>((resolve, reject) => {
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      const first = /^mnemo listening on (http:\/\/\S+)\n/.exec(stdout);
      if (first !== null) resolve(first[1]!);
    });
    child.once('close', (code) => reject(new Error(`mnemo serve exited with ${code} before listening: ${stderr}`)));
  });
}

/** Reads the served file directly, as the store holds it (a second connection to the WAL file). */
async function readStore<T>(read: (store: ReturnType<typeof createSqliteStore>) => Promise<T>): Promise<T> {
  const store = createSqliteStore({ path: db });
  try {
    return await read(store);
  } finally {
    await store.close();
  }
}

/** Opens the page in a new tab, enters the key, and waits for the conversation list. */
async function signIn(key: string, width?: number, height?: number): Promise<InspectorTab> {
  const tab = await browser.open(width, height);
  await tab.page.goto(`${url}/inspect`);
  await tab.page.locator('#key-panel').waitFor({ state: 'visible' });
  await tab.page.fill('#key-input', key);
  await tab.page.click('#key-form button[type=submit]');
  await tab.page.locator('[data-view="conversations"]').waitFor();
  return tab;
}

const go = showView;

async function contextTokensShown(page: Page, maxTokens: number): Promise<number> {
  await page.fill('input[name=maxTokens]', String(maxTokens));
  await page.selectOption('select[name=policy]', 'hybrid');
  await page.click('[data-view="context"] form button[type=submit]');
  // The form navigates: the new hash carries the budget, and the view rendered for it shows it in its field.
  await page.locator(`[data-view="context"] input[name=maxTokens][value="${maxTokens}"]`).waitFor();
  expect(await currentHash(page)).toContain(`maxTokens=${maxTokens}`);
  return Number(await page.locator('[data-sent-tokens]').getAttribute('data-sent-tokens'));
}

async function apiContextTokens(maxTokens: number): Promise<number> {
  const response = await fetch(`${url}/v1/conversations/${seed.conversation}/context`, {
    method: 'POST',
    headers: { authorization: `Bearer ${seed.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ userId: seed.user, policy: 'hybrid', maxTokens }),
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { report: { sentTokens: number } }).report.sentTokens;
}

if (missing !== undefined && !inCi) {
  describe('inspector in a real browser', () => {
    it.skip(`is skipped: ${missing}`, () => {});
  });
} else {
  describe('inspector in a real browser', () => {
    beforeAll(async () => {
      if (missing !== undefined) throw new Error(`CI needs Chromium for the inspector tests: ${missing}`);
      work = await makeWorkDirectory();
      db = join(work.path, 'inspected.db');
      await seedInspectorStore(db);
      url = await startServe();
      browser = await launchInspectorBrowser();
    }, 120_000);

    afterAll(async () => {
      await browser?.close();
      if (serve !== undefined && serve.exitCode === null) serve.kill('SIGKILL');
      await work?.remove();
    });

    it('asks for the key, never puts it in a URL, and lists the tenant’s conversations', async () => {
      const tab = await signIn(seed.key);
      const rows = tab.page.locator('[data-view="conversations"] tr[data-conversation]');
      expect(await rows.count()).toBe(1);
      expect(await rows.first().getAttribute('data-conversation')).toBe(seed.conversation);
      expect(await rows.first().locator('[data-message-count]').textContent()).toBe('20');
      expect(tab.page.url()).not.toContain(seed.key);
      await tab.page.fill('input[name=search]', 'nothing-like-this');
      await tab.page.click('[data-view="conversations"] form button[type=submit]');
      await tab.page.locator('[data-view="conversations"] [data-empty]').waitFor();
      await browser.screenshot(tab.page, 'conversations-empty-search');
      await go(tab.page, '#/conversations?search=RIDGE', 'conversations');
      await tab.page.locator('tr[data-conversation]').first().waitFor();
      await browser.screenshot(tab.page, 'conversations');
      expect(tab.problems).toEqual([]);
    }, 60_000);

    it('expands a summary to exactly the stored source messages and draws the watermark', async () => {
      const tab = await signIn(seed.key);
      await go(tab.page, `#/conversation/${seed.user}/${seed.conversation}`, 'conversation');
      const { summaries, stored, conversation } = await readStore(async (store) => {
        const summaries = await store.listSummaries(scope);
        const latest = summaries.at(-1)!;
        return {
          summaries,
          stored: await store.listMessages(scope, { afterSeq: latest.fromSeq - 1, beforeSeq: latest.toSeq + 1 }),
          conversation: (await store.getConversation(scope))!,
        };
      });
      expect(await tab.page.locator('details[data-summary]').count()).toBe(summaries.length);
      const latest = summaries.at(-1)!;
      await tab.page.click(`details[data-summary="${latest.id}"] > summary`);
      const shown = tab.page.locator(`[data-expansion="${latest.id}"] [data-source-messages] tr[data-seq]`);
      await shown.first().waitFor();
      const rows = await shown.evaluateAll((elements: PageElement[]) =>
        elements.map((row) => ({
          seq: Number(row.getAttribute('data-seq')),
          content: row.querySelector('[data-content]')!.firstChild?.textContent ?? '',
        })),
      );
      expect(rows).toEqual(stored.map((message) => ({ seq: message.seq, content: message.content })));
      expect(await tab.page.locator(`[data-folded="${summaries[0]!.id}"]`).count()).toBe(1);
      expect(await tab.page.locator('tr.watermark').getAttribute('data-watermark')).toBe(
        String(conversation.summarizedThroughSeq),
      );
      await browser.screenshot(tab.page, 'conversation-expanded-summary');
      // A fact links to the message it was said in.
      const link = tab.page.locator('[data-fact] a[data-source-seq]').first();
      const seq = await link.getAttribute('data-source-seq');
      await link.click();
      await tab.page.locator(`tr[data-seq="${seq}"][data-focus]`).waitFor();
      expect(tab.problems).toEqual([]);
    }, 60_000);

    it('shows the next request with the same token count as the API for each budget, and explains recall', async () => {
      const tab = await signIn(seed.key);
      await go(tab.page, `#/context/${seed.user}/${seed.conversation}`, 'context');
      for (const budget of [180, 260, 1200]) {
        const shown = await contextTokensShown(tab.page, budget);
        expect(shown).toBe(await apiContextTokens(budget));
        expect(shown).toBeLessThanOrEqual(budget);
      }
      await tab.page.fill('input[name=query]', 'what battery pack did I buy?');
      await tab.page.click('[data-view="context"] form button[type=submit]');
      await tab.page.locator('[data-view="context"] input[name=query][value="what battery pack did I buy?"]').waitFor();
      const recalled = tab.page.locator('tr[data-recalled]');
      await recalled.first().waitFor();
      // Keyword rank, BM25, vector similarity and fused score of the best hit (rows are best first): both retrievers found it.
      const scores = await recalled.first().locator('td.num').allTextContents();
      expect(scores[0]).toMatch(/^\d+$/);
      expect(scores.slice(1)).toEqual([
        expect.stringMatching(/^\d\.\d{4}$/),
        expect.stringMatching(/^-?\d\.\d{4}$/),
        expect.stringMatching(/^\d\.\d{4}$/),
      ]);
      await browser.screenshot(tab.page, 'next-request');
      expect(tab.problems).toEqual([]);
    }, 60_000);

    it('plots one point per context request in the ledger, and previews add none', async () => {
      const tab = await signIn(seed.key);
      const before = await readStore(async (store) => (await store.listUsage(scope, { limit: 1000 })).items);
      await go(tab.page, `#/context/${seed.user}/${seed.conversation}`, 'context');
      await go(tab.page, `#/savings/${seed.user}/${seed.conversation}`, 'savings');
      const ledger = await readStore(async (store) => (await store.listUsage(scope, { limit: 1000 })).items);
      expect(ledger).toEqual(before);
      const requests = ledger.filter((entry) => entry.kind === 'context');
      const points = await tab.page
        .locator('[data-plot] circle[data-point]')
        .evaluateAll((elements: PageElement[]) => elements.map((point) => Number(point.getAttribute('data-point'))));
      expect(points).toEqual(requests.map((entry) => entry.position));
      expect(await tab.page.locator('[data-plot] rect[data-compaction]').count()).toBe(ledger.length - requests.length);
      const sent = requests.reduce((sum, entry) => sum + entry.sentTokens, 0);
      expect(await tab.page.locator('tr[data-total="sent"]').getAttribute('data-tokens')).toBe(String(sent));
      await go(tab.page, `#/savings/${seed.user}/${seed.conversation}?price=10`, 'savings');
      await tab.page.locator('input[name=price][value="10"]').waitFor();
      await browser.screenshot(tab.page, 'savings');
      expect(tab.problems).toEqual([]);
    }, 60_000);

    it('shows current facts, the superseded value in the history, and the facts valid on a past day', async () => {
      const tab = await signIn(seed.key);
      await go(tab.page, `#/facts/${seed.user}`, 'facts');
      const current = await tab.page.locator('[data-view="facts"] h2 + .table-wrap tr[data-fact]').allTextContents();
      expect(current.some((text) => text.includes('Bergen'))).toBe(true);
      expect(current.some((text) => text.includes('Oslo'))).toBe(false);
      const history = tab.page.locator('h3[data-history="user/lives_in"] + .table-wrap tr[data-fact]');
      expect(await history.count()).toBe(2);
      expect(await history.first().getAttribute('data-current')).toBe('false');
      await browser.screenshot(tab.page, 'facts');
      await go(tab.page, `#/facts/${seed.user}?asOf=2026-11-01`, 'facts');
      expect(await tab.page.locator('[data-view="facts"] h2').first().textContent()).toContain('2026-11-01');
      expect(tab.problems).toEqual([]);
    }, 60_000);

    it('shows jobs by kind and status and the last failure with its error', async () => {
      const tab = await signIn(seed.key);
      await go(tab.page, '#/background', 'background');
      expect(await tab.page.locator('tr[data-kind="embed"] td[data-status="failed"]').textContent()).toBe('1');
      expect(await tab.page.locator('tr[data-kind="compact"] td[data-status="pending"]').textContent()).toBe('1');
      expect(await tab.page.locator('tr[data-kind="compact"] td[data-oldest-pending]').textContent()).toMatch(
        /^\d+ (s|min)$/,
      );
      expect(await tab.page.locator('tr[data-job]').first().textContent()).toContain(seed.failedJobError);
      await browser.screenshot(tab.page, 'background');
      expect(tab.problems).toEqual([]);
    }, 60_000);

    it('shows a key of one tenant nothing of the other', async () => {
      const tab = await signIn(seed.otherKey);
      const ids = await tab.page
        .locator('tr[data-conversation]')
        .evaluateAll((rows: PageElement[]) => rows.map((row) => row.getAttribute('data-conversation')));
      expect(ids).toEqual([seed.otherConversation]);
      await go(tab.page, '#/background', 'background');
      expect(await tab.page.locator('tr[data-job]').count()).toBe(0);
      expect(await tab.page.content()).not.toContain(seed.failedJobError);
      await go(tab.page, `#/facts/${seed.user}`, 'facts');
      expect(await tab.page.locator('tr[data-fact]').count()).toBe(0);
      await tab.page.evaluate(`location.hash = ${JSON.stringify(`#/conversation/${seed.user}/${seed.conversation}`)}`);
      await tab.page.locator('.state-error').waitFor();
      expect(await tab.page.locator('.state-error').textContent()).toContain('not_found');
      await browser.screenshot(tab.page, 'other-tenant-not-found');
      // The one 404 above is the answer under test; anything else is a defect.
      expect(tab.problems.filter((problem) => !problem.includes('status of 404'))).toEqual([]);
    }, 60_000);

    it('fits a phone-width screen without sideways scrolling of the page', async () => {
      const tab = await signIn(seed.key, 390, 844);
      for (const [route, view] of [
        ['#/conversations', 'conversations'],
        [`#/conversation/${seed.user}/${seed.conversation}`, 'conversation'],
        [`#/context/${seed.user}/${seed.conversation}`, 'context'],
        [`#/savings/${seed.user}/${seed.conversation}`, 'savings'],
      ] as const) {
        await go(tab.page, route, view);
        const overflow = await tab.page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
        expect(overflow, view).toBeLessThanOrEqual(0);
        if (view === 'conversations') {
          // The table itself fits too: nothing hides behind a sideways scroll without a hint.
          const tableOverflow = await tab.page.evaluate<number>(
            "(() => { const box = document.querySelector('.table-wrap'); return box.scrollWidth - box.clientWidth; })()",
          );
          expect(tableOverflow, 'conversations table').toBeLessThanOrEqual(0);
        }
        await browser.screenshot(tab.page, `phone-${view}`);
      }
      expect(tab.problems).toEqual([]);
    }, 60_000);

    // Writes last: they change what the other tests read. A user and conversation of their own.
    it('retires and corrects a fact, erases a message and a user, each after a confirmation, through the API with the key', async () => {
      const headers = { authorization: `Bearer ${seed.key}`, 'content-type': 'application/json' };
      const api = async (method: string, path: string, body?: unknown) => {
        const response = await fetch(`${url}${path}`, {
          method,
          headers,
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
        return { status: response.status, body: (await response.json()) as Record<string, unknown> };
      };
      await api('POST', '/v1/conversations/edit-chat/messages', {
        messages: ['first line', 'second line', 'third line'].map((content) => ({ role: 'user', content })),
      }).then((result) => expect(result.status).toBe(201));
      const put = async (attribute: string, value: string) =>
        ((await api('POST', '/v1/facts', { userId: 'edit-chat', attribute, value })).body['fact'] as { id: string }).id;
      const gate = await put('gate_code', '4417');
      const town = await put('home_town', 'Tromsø');
      const tab = await signIn(seed.key);
      const factRows = () => tab.page.locator('[data-view="facts"] h2 + .table-wrap tr[data-fact]');

      // A dismissed confirmation writes nothing.
      await go(tab.page, '#/facts/edit-chat', 'facts');
      tab.page.once('dialog', (dialog) => void dialog.dismiss());
      await tab.page.click(`button[data-action="retire-fact"][data-fact-id="${gate}"]`);
      await tab.page.waitForTimeout(300);
      expect(await factRows().count()).toBe(2);

      tab.page.once('dialog', (dialog) => void dialog.accept());
      await tab.page.click(`button[data-action="retire-fact"][data-fact-id="${gate}"]`);
      await tab.page
        .locator(`[data-view="facts"] h2 + .table-wrap tr[data-fact="${gate}"]`)
        .waitFor({ state: 'detached' });
      tab.page.once('dialog', (dialog) => void dialog.accept('Bodø'));
      await tab.page.click(`button[data-action="correct-fact"][data-fact-id="${town}"]`);
      await tab.page.locator('[data-view="facts"] h2 + .table-wrap tr[data-fact]', { hasText: 'Bodø' }).waitFor();
      const facts = (await api('GET', '/v1/facts?user_id=edit-chat&history=true')).body['facts'] as {
        id: string;
        value: string;
        validTo?: string;
        supersededBy?: string;
      }[];
      expect(facts.map((fact) => [fact.value, fact.validTo !== undefined])).toEqual([
        ['4417', true],
        ['Tromsø', true],
        ['Bodø', false],
      ]);
      await browser.screenshot(tab.page, 'facts-edited');

      await go(tab.page, '#/conversation/edit-chat/edit-chat', 'conversation');
      tab.page.once('dialog', (dialog) => void dialog.accept());
      await tab.page.click('button[data-action="erase-message"][data-seq="2"]');
      await tab.page.locator('[data-transcript] tr[data-seq="2"]').waitFor({ state: 'detached' });
      const left = (await api('GET', '/v1/conversations/edit-chat/messages?user_id=edit-chat')).body['items'] as {
        content: string;
      }[];
      expect(left.map((message) => message.content)).toEqual(['first line', 'third line']);

      // Another tenant's key cannot erase this user: the page shows the API's answer and nothing goes.
      const other = await signIn(seed.otherKey);
      await go(other.page, '#/facts/edit-chat', 'facts');
      other.page.once('dialog', (dialog) => void dialog.accept());
      await other.page.click('button[data-action="erase-user"]');
      await other.page.waitForTimeout(500);
      expect((await api('GET', '/v1/conversations/edit-chat/messages?user_id=edit-chat')).status).toBe(200);

      await go(tab.page, '#/facts/edit-chat', 'facts');
      tab.page.once('dialog', (dialog) => void dialog.accept());
      await tab.page.click('button[data-action="erase-user"]');
      await tab.page.locator('[data-view="conversations"]').waitFor();
      expect((await api('GET', '/v1/facts?user_id=edit-chat&history=true')).body['facts']).toEqual([]);
      expect((await api('GET', '/v1/conversations/edit-chat/messages?user_id=edit-chat')).status).toBe(404);
      expect(tab.problems).toEqual([]);
    }, 90_000);
  });
}
