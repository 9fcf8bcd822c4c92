import type { UserScope } from '@mnemo/core';
import { createKeyedLock } from '@mnemo/core/internals';
import { ByteBudgetCache, KeywordPostings, KeywordRanker, type SearchHit } from '@mnemo/core/store-kit';
import type { PostgresClient, PostgresPool, PostgresQueryable } from './postgres-driver.js';
import { prefixedMessageColumns, toHit, type HitRow } from './postgres-search-filters.js';
import type { PostgresTables } from './postgres-tables.js';
import { runInTransaction } from './postgres-transaction.js';

/** The most bytes of word lists one store keeps in memory before it forgets the least recently searched user. */
export const defaultPostgresKeywordCacheBytes = 128 * 1024 * 1024;
/** Messages a search reads itself to bring a copy up to date; a copy further behind is loaded in the background while SQL answers. */
const inlineRows = 2000;
/** Messages one background read takes (one REPEATABLE READ transaction each). */
const loadPageRows = 5000;
/** Seconds a user's background load is not retried after it failed. */
const retryAfterMs = 10_000;
const snapshot = 'BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY';

/** A conversation of the user as its row says now: when it was created (epoch ms) and how many messages it holds. */
interface ConversationMark {
  readonly createdAt: number;
  readonly count: number;
  /** Messages erased one by one (`erased_messages`): when it moves, the copy reads the user afresh. */
  readonly erased: number;
}

// One user's messages as postings keyed by seq, and per conversation how far the copy has read: a
// conversation's messages are appended under its row lock with seqs 1, 2, …, so seq order is commit order
// and `message_count` is the newest seq; an erase of single messages leaves gaps and counts them in
// `erased_messages`, which the copy remembers.
class UserLexemes extends KeywordPostings {
  readonly read = new Map<string, { readonly createdAt: number; readonly erased: number; seq: number }>();

  /** False when a conversation the copy read is gone, was created again, had messages erased, or holds fewer messages than read. */
  fits(marks: ReadonlyMap<string, ConversationMark>): boolean {
    for (const [conversationId, { createdAt, erased, seq }] of this.read) {
      const mark = marks.get(conversationId);
      if (mark === undefined || mark.createdAt !== createdAt || mark.erased !== erased || mark.count < seq)
        return false;
    }
    return true;
  }

  /** Adds messages read from the table (in seq order within each conversation) and moves the marks of what was read. */
  addRows(rows: readonly LexemeRow[], marks: ReadonlyMap<string, ConversationMark>): void {
    for (const row of rows) {
      const seq = Number(row.seq);
      const lexemes = tsvectorLexemes(row.lexemes);
      this.add(seq, row.conversation_id, Number(row.at), lexemes, lexemes.size);
      const read = this.read.get(row.conversation_id);
      const mark = marks.get(row.conversation_id)!;
      if (read === undefined)
        this.read.set(row.conversation_id, { createdAt: mark.createdAt, erased: mark.erased, seq });
      else read.seq = seq;
    }
  }

  /** Messages the copy lacks. */
  behind(marks: ReadonlyMap<string, ConversationMark>): number {
    let missing = 0;
    for (const [conversationId, { count }] of marks) missing += count - (this.read.get(conversationId)?.seq ?? 0);
    return missing;
  }
}

type LexemeRow = { conversation_id: string; seq: string | number; at: number; lexemes: string };

/**
 * The lexemes of a tsvector's text form (`'relay':3 'ridg':1,5A 'o''brien':2`: quotes and backslashes
 * inside a lexeme doubled) with how many positions each has (at least 1), as `unnest(tsvector)` gives them.
 * Parsed here because PostgreSQL takes several times longer to build arrays of them than to print the text.
 */
export function tsvectorLexemes(text: string): Map<string, number> {
  const lexemes = new Map<string, number>();
  let index = 0;
  while (index < text.length) {
    if (text[index] !== "'") {
      index += 1;
      continue;
    }
    let lexeme = '';
    let from = index + 1;
    for (;;) {
      const quote = text.indexOf("'", from);
      const backslash = text.indexOf('\\', from);
      if (backslash !== -1 && (quote === -1 || backslash < quote)) {
        lexeme += text.slice(from, backslash) + text[backslash + 1];
        from = backslash + 2;
      } else if (quote !== -1 && text[quote + 1] === "'") {
        lexeme += text.slice(from, quote + 1);
        from = quote + 2;
      } else {
        lexeme += text.slice(from, quote === -1 ? text.length : quote);
        index = quote === -1 ? text.length : quote + 1;
        break;
      }
    }
    let positions = 0;
    if (text[index] === ':') {
      const end = text.indexOf(' ', index);
      const list = text.slice(index + 1, end === -1 ? text.length : end);
      positions = list.split(',').length;
      index = end === -1 ? text.length : end;
    }
    lexemes.set(lexeme, Math.max(positions, 1));
  }
  return lexemes;
}

/**
 * A process's keyword index of users' messages on PostgreSQL (decision 0028): per user, the posting list
 * of every lexeme of `search_vector` (PostgreSQL's own English stemming), ranked by the BM25 of the
 * keyword statements (same statistics, same rounding), so the index and SQL give the same hits. Each
 * search reads the user's conversation rows; a copy that fits them answers, after reading the messages
 * it lacks by them when they are at most {@link inlineRows}; a copy that no longer fits them is read
 * afresh in one snapshot; a copy further
 * behind (a large user's first search in this process) is loaded in the background, a page per
 * transaction, and SQL answers meanwhile. A conversation that is gone or was created again makes the copy
 * be read afresh. Hits are read from the table with their owner checked. Copies past `maxBytes` are
 * forgotten least recently searched first.
 */
export class PostgresKeywordIndex {
  readonly #pool: PostgresPool;
  readonly #tables: PostgresTables;
  readonly #copies: ByteBudgetCache<UserLexemes>;
  // One change of a user's copy at a time: each runs after every earlier one of the same user has finished.
  readonly #locks = createKeyedLock();
  readonly #loads = new Map<string, Promise<void>>();
  readonly #failed = new Map<string, number>();
  readonly #ranker = new KeywordRanker();
  #closed = false;

  constructor(pool: PostgresPool, tables: PostgresTables, maxBytes = defaultPostgresKeywordCacheBytes) {
    this.#pool = pool;
    this.#tables = tables;
    this.#copies = new ByteBudgetCache(maxBytes);
  }

  /** Bytes of word lists held now (an estimate). */
  get bytes(): number {
    return this.#copies.bytes;
  }

  /**
   * The `k` best messages of the user for the query's words (their distinct lexemes, as
   * `to_tsvector('english', …)` gives them), or `undefined` when the user's copy is still being loaded
   * (the caller asks SQL). Two statements when the copy is up to date (the query's lexemes with the
   * conversation rows, then the hits), three when it lacks a few messages.
   */
  async search(user: UserScope, words: string, k: number): Promise<SearchHit[] | undefined> {
    const key = `${user.tenantId}\u001f${user.userId}`;
    if (this.#loads.has(key)) return undefined;
    const result = await this.#locks.run(key, async () => {
      const { lexemes, marks } = await this.#marks(this.#pool, user, words);
      if (lexemes.length === 0) return [];
      let copy = this.#copies.get(key);
      // A copy that fits the rows and lacks a few messages reads them outside a transaction: the rows'
      // counts bound what it reads, and the read checks each conversation's `created_at` again.
      if (
        copy !== undefined &&
        (!copy.fits(marks) ||
          copy.behind(marks) > inlineRows ||
          !(await this.#readPage(this.#pool, user, copy, marks, inlineRows)))
      )
        copy = undefined;
      if (copy === undefined) {
        copy = await runInTransaction(this.#pool, (client) => this.#catchUp(client, key, user), { begin: snapshot });
        if (copy === undefined) return undefined;
      }
      this.#copies.put(key, copy);
      const ranked = this.#ranker.rank(
        copy,
        lexemes.map((lexeme) => [lexeme]),
        k,
        {},
      );
      const names = copy.names;
      const conversations = copy.conversations;
      return this.#hits(
        user,
        ranked.map(({ key: seq, slot, score }) => ({ conversationId: names.nameOf(conversations[slot]!), seq, score })),
      );
    });
    if (result === undefined) this.#startLoad(key, user);
    return result;
  }

  // Brings the user's copy up to date in one snapshot when it is at most `inlineRows` behind; undefined
  // (the copy left for a background load) otherwise.
  async #catchUp(client: PostgresClient, key: string, user: UserScope): Promise<UserLexemes | undefined> {
    const { marks } = await this.#marks(client, user, '');
    const copy = this.#current(key, marks);
    if (copy.behind(marks) > inlineRows) return undefined;
    while (copy.behind(marks) > 0) {
      if (!(await this.#readPage(client, user, copy, marks, inlineRows))) {
        this.#copies.delete(key);
        return undefined;
      }
    }
    return copy;
  }

  /** Loads the user's copy now (a large user's first search would otherwise be answered by SQL while it loads). */
  async warm(user: UserScope): Promise<void> {
    const key = `${user.tenantId}\u001f${user.userId}`;
    this.#startLoad(key, user, true);
    await this.#loads.get(key);
  }

  /** Stops background loads (each stops after its current page) and waits for them. */
  async close(): Promise<void> {
    this.#closed = true;
    await Promise.allSettled([...this.#loads.values()]);
  }

  #startLoad(key: string, user: UserScope, force = false): void {
    if (this.#closed || this.#loads.has(key)) return;
    if (!force && Date.now() - (this.#failed.get(key) ?? -Infinity) < retryAfterMs) return;
    const load = (async () => {
      try {
        for (;;) {
          if (this.#closed) return;
          const done = await this.#locks.run(key, () =>
            runInTransaction(
              this.#pool,
              async (client) => {
                const { marks } = await this.#marks(client, user, '');
                const copy = this.#current(key, marks);
                if (copy.behind(marks) > 0 && !(await this.#readPage(client, user, copy, marks, loadPageRows)))
                  throw new Error('the conversation rows name messages that are not there');
                this.#copies.put(key, copy);
                return copy.behind(marks) === 0;
              },
              { begin: snapshot },
            ),
          );
          if (done) {
            this.#failed.delete(key);
            return;
          }
        }
      } catch {
        // The next search after `retryAfterMs` tries again; SQL answers until then.
        this.#failed.set(key, Date.now());
        this.#copies.delete(key);
      } finally {
        this.#loads.delete(key);
      }
    })();
    this.#loads.set(key, load);
  }

  // The user's copy, afresh when the old one no longer fits the conversation rows.
  #current(key: string, marks: ReadonlyMap<string, ConversationMark>): UserLexemes {
    const copy = this.#copies.get(key);
    if (copy !== undefined && copy.fits(marks)) return copy;
    // Held (and counted) once a caller has read into it and puts it.
    this.#copies.delete(key);
    return new UserLexemes();
  }

  // The user's conversation rows now, and the distinct lexemes of `words` (none for '').
  async #marks(
    client: PostgresQueryable,
    user: UserScope,
    words: string,
  ): Promise<{ lexemes: string[]; marks: Map<string, ConversationMark> }> {
    const rows = (
      await client.query<{
        lexemes: string[];
        conversation_id: string | null;
        created_ms: number;
        message_count: string | number;
        erased_messages: string | number;
      }>(
        `WITH q AS (SELECT coalesce(array_agg(DISTINCT l.lexeme), '{}') AS lexemes FROM unnest(tsvector_to_array(to_tsvector('english', $3))) AS l (lexeme))
         SELECT q.lexemes, c.conversation_id, (extract(epoch FROM c.created_at) * 1000)::float8 AS created_ms, c.message_count, c.erased_messages
         FROM q LEFT JOIN ${this.#tables.conversations} c ON c.tenant_id = $1 AND c.user_id = $2`,
        [user.tenantId, user.userId, words],
      )
    ).rows;
    const marks = new Map<string, ConversationMark>();
    for (const row of rows)
      if (row.conversation_id !== null)
        marks.set(row.conversation_id, {
          createdAt: Number(row.created_ms),
          count: Number(row.message_count),
          erased: Number(row.erased_messages),
        });
    return { lexemes: rows[0]?.lexemes ?? [], marks };
  }

  // Reads up to `limit` of the messages the copy lacks by `marks`, conversation by conversation in seq
  // order, and adds them; false, adding nothing, when the table no longer holds exactly those (a
  // conversation deleted or created again since `marks` were read, outside a snapshot).
  async #readPage(
    client: PostgresQueryable,
    user: UserScope,
    copy: UserLexemes,
    marks: ReadonlyMap<string, ConversationMark>,
    limit: number,
  ): Promise<boolean> {
    // Each conversation up to its own bound, so that a page reads `limit` rows at most.
    const wanted: [conversationId: string, after: number, through: number][] = [];
    let budget = limit;
    for (const [conversationId, { count }] of marks) {
      const after = copy.read.get(conversationId)?.seq ?? 0;
      if (count <= after || budget === 0) continue;
      const through = Math.min(count, after + budget);
      wanted.push([conversationId, after, through]);
      budget -= through - after;
    }
    if (wanted.length === 0) return true;
    const rows = (
      await client.query<LexemeRow & { conversation_ms: number; conversation_erased: string | number }>(
        `SELECT w.conversation_id, m.seq, (extract(epoch FROM m.created_at) * 1000)::float8 AS at, m.search_vector::text AS lexemes,
           (extract(epoch FROM c.created_at) * 1000)::float8 AS conversation_ms, c.erased_messages AS conversation_erased
         FROM unnest($3::text[], $4::bigint[], $5::bigint[]) AS w (conversation_id, after_seq, through_seq)
         JOIN ${this.#tables.conversations} c ON c.tenant_id = $1 AND c.user_id = $2 AND c.conversation_id = w.conversation_id
         CROSS JOIN LATERAL (
           SELECT m.seq, m.created_at, m.search_vector FROM ${this.#tables.messages} m
           WHERE m.tenant_id = $1 AND m.user_id = $2 AND m.conversation_id = w.conversation_id AND m.seq > w.after_seq AND m.seq <= w.through_seq
         ) m
         ORDER BY w.conversation_id, m.seq`,
        [
          user.tenantId,
          user.userId,
          wanted.map(([conversationId]) => conversationId),
          wanted.map(([, after]) => after),
          wanted.map(([, , through]) => through),
        ],
      )
    ).rows;
    // A conversation without erasures must hold every seq up to its count; one with erasures holds at
    // most that many (the gaps are the erased seqs, counted in the mark it still matches).
    const found = new Map<string, number>();
    for (const row of rows) found.set(row.conversation_id, (found.get(row.conversation_id) ?? 0) + 1);
    const complete = wanted.every(([conversationId, after, through]) => {
      const mark = marks.get(conversationId)!;
      const read = found.get(conversationId) ?? 0;
      return mark.erased === 0 ? read === through - after : read <= through - after;
    });
    const same = rows.every((row) => {
      const mark = marks.get(row.conversation_id)!;
      return Number(row.conversation_ms) === mark.createdAt && Number(row.conversation_erased) === mark.erased;
    });
    if (!complete || !same) return false;
    copy.addRows(rows, marks);
    // Every wanted range is read to its end, erased seqs at its tail included, so a gap is never waited for.
    for (const [conversationId, , through] of wanted) {
      const read = copy.read.get(conversationId);
      const mark = marks.get(conversationId)!;
      if (read === undefined)
        copy.read.set(conversationId, { createdAt: mark.createdAt, erased: mark.erased, seq: through });
      else read.seq = through;
    }
    return true;
  }

  // The messages of ranked (conversation, seq) pairs, in their order, read with their owner checked.
  async #hits(
    user: UserScope,
    ranked: readonly { conversationId: string; seq: number; score: number }[],
  ): Promise<SearchHit[]> {
    if (ranked.length === 0) return [];
    const rows = (
      await this.#pool.query<HitRow & { seq: string | number }>(
        `SELECT ${prefixedMessageColumns}, m.conversation_id, 0 AS score
         FROM unnest($3::text[], $4::bigint[]) AS h (conversation_id, seq)
         JOIN ${this.#tables.messages} m ON m.tenant_id = $1 AND m.user_id = $2 AND m.conversation_id = h.conversation_id AND m.seq = h.seq`,
        [user.tenantId, user.userId, ranked.map((hit) => hit.conversationId), ranked.map((hit) => hit.seq)],
      )
    ).rows;
    const found = new Map(rows.map((row) => [`${row.conversation_id}\u001f${Number(row.seq)}`, row]));
    return ranked.flatMap(({ conversationId, seq, score }) => {
      const row = found.get(`${conversationId}\u001f${seq}`);
      return row === undefined ? [] : [{ ...toHit(row), score }];
    });
  }
}
