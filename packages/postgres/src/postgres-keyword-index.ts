import type { UserScope } from '@mnemo/core';
import {
  KeywordPostings,
  KeywordRanker,
  UserCopies,
  type CopyPage,
  type CopySource,
  type KeywordRow,
  type SearchHit,
} from '@mnemo/core/store-kit';
import type { PostgresPool, PostgresQueryable } from './postgres-driver.js';
import { prefixedMessageColumns, toHit, type HitRow } from './postgres-search-filters.js';
import type { PostgresTables } from './postgres-tables.js';

/** The most bytes of word lists one store keeps in memory before it forgets the least recently searched user. */
export const defaultPostgresKeywordCacheBytes = 128 * 1024 * 1024;
/** Messages a search reads itself to bring a copy up to date; a copy further behind is loaded in the background while SQL answers. */
const inlineRows = 2000;
/** Messages one background read takes. */
const loadPageRows = 5000;

/** A conversation of the user as its row says now: when it was created (epoch ms) and how many messages it holds. */
interface ConversationMark {
  readonly createdAt: number;
  readonly count: number;
  /** Messages erased one by one (`erased_messages`): when it moves, the copy reads the user afresh. */
  readonly erased: number;
}

/** The user's conversation rows now, by conversation. */
type ConversationMarks = ReadonlyMap<string, ConversationMark>;

/** How far a copy has read each conversation: the row it read at (creation time, erasures) and the last seq. */
type ReadMarks = ReadonlyMap<string, { readonly createdAt: number; readonly erased: number; readonly seq: number }>;

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
 * The copy source of a user's messages on PostgreSQL. A global id is not commit-ordered across concurrent
 * transactions, but a conversation's messages are appended under its row lock with seqs 1, 2, … in commit
 * order and `message_count` is the newest seq; so a copy remembers per conversation its `created_at`,
 * erasures and the last seq read, and reads what it lacks conversation by conversation, bounded by the
 * rows' counts and checked against each conversation's `created_at` and `erased_messages` in the same
 * statement (no transaction: a user who has just appended, as every proxied turn does, pays no BEGIN and
 * COMMIT). A conversation that is gone, was created again, had messages erased or holds fewer messages
 * than read makes the copy start afresh.
 */
export function conversationSource(
  pool: PostgresPool,
  tables: PostgresTables,
  user: UserScope,
): CopySource<ConversationMarks, ReadMarks, KeywordRow> {
  return {
    mark: async () => (await readMarks(pool, tables, user, '')).marks,
    start: () => new Map(),
    fits: (read, marks) => {
      for (const [conversationId, { createdAt, erased, seq }] of read) {
        const mark = marks.get(conversationId);
        if (mark === undefined || mark.createdAt !== createdAt || mark.erased !== erased || mark.count < seq)
          return false;
      }
      return true;
    },
    behind: (read, marks) => {
      let missing = 0;
      for (const [conversationId, { count }] of marks) missing += count - (read.get(conversationId)?.seq ?? 0);
      return missing;
    },
    rowsSince: (read, marks, limit) => readPage(pool, tables, user, read, marks, limit),
  };
}

/**
 * A process's keyword index of users' messages on PostgreSQL (decision 0028): per user, the posting list
 * of every lexeme of `search_vector` (PostgreSQL's own English stemming), ranked by the BM25 of the
 * keyword statements (same statistics, same rounding), so the index and SQL give the same hits. The copy
 * is kept by core's protocol (`UserCopies` over {@link conversationSource}): a search reads the user's
 * conversation rows with the query's lexemes; a copy at most {@link inlineRows} behind is brought forward
 * by the search, one further behind (a large user's first search in this process) is loaded in the
 * background a page at a time while SQL answers. Hits are read from the table with their owner checked.
 */
export class PostgresKeywordIndex {
  readonly #pool: PostgresPool;
  readonly #tables: PostgresTables;
  readonly #copies: UserCopies<ConversationMarks, ReadMarks, KeywordRow, KeywordPostings>;
  readonly #ranker = new KeywordRanker();

  constructor(pool: PostgresPool, tables: PostgresTables, maxBytes = defaultPostgresKeywordCacheBytes) {
    this.#pool = pool;
    this.#tables = tables;
    this.#copies = new UserCopies({
      create: () => new KeywordPostings(),
      maxBytes,
      pageRows: loadPageRows,
      inlineRows,
      farBehind: 'load',
    });
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
    const { lexemes, marks } = await readMarks(this.#pool, this.#tables, user, words);
    if (lexemes.length === 0) return [];
    const source = conversationSource(this.#pool, this.#tables, user);
    const ranked = await this.#copies.use(
      keyOf(user),
      source,
      (copy) =>
        this.#ranker
          .rank(
            copy,
            lexemes.map((lexeme) => [lexeme]),
            k,
            {},
          )
          .map(({ key: seq, slot, score }) => ({
            conversationId: copy.names.nameOf(copy.conversations[slot]!),
            seq,
            score,
          })),
      marks,
    );
    return ranked === undefined ? undefined : this.#hits(user, ranked);
  }

  /** Loads the user's copy now (a large user's first search would otherwise be answered by SQL while it loads). */
  warm(user: UserScope): Promise<void> {
    return this.#copies.warm(keyOf(user), conversationSource(this.#pool, this.#tables, user));
  }

  /** Stops background loads (each stops after its current page) and waits for them. */
  close(): Promise<void> {
    return this.#copies.close();
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

function keyOf(user: UserScope): string {
  return `${user.tenantId}\u001f${user.userId}`;
}

// The user's conversation rows now, and the distinct lexemes of `words` (none for ''), in one statement.
async function readMarks(
  client: PostgresQueryable,
  tables: PostgresTables,
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
       FROM q LEFT JOIN ${tables.conversations} c ON c.tenant_id = $1 AND c.user_id = $2`,
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

// Reads up to `limit` of the messages a copy at `read` lacks by `marks`, conversation by conversation in
// seq order; undefined when the table no longer holds exactly those (a conversation deleted, created
// again or with messages erased since `marks` were read).
async function readPage(
  client: PostgresQueryable,
  tables: PostgresTables,
  user: UserScope,
  read: ReadMarks,
  marks: ConversationMarks,
  limit: number,
): Promise<CopyPage<ReadMarks, KeywordRow> | undefined> {
  // Each conversation up to its own bound, so that a page reads `limit` rows at most.
  const wanted: [conversationId: string, after: number, through: number][] = [];
  let budget = limit;
  for (const [conversationId, { count }] of marks) {
    const after = read.get(conversationId)?.seq ?? 0;
    if (count <= after || budget === 0) continue;
    const through = Math.min(count, after + budget);
    wanted.push([conversationId, after, through]);
    budget -= through - after;
  }
  if (wanted.length === 0) return { rows: [], position: read };
  const rows = (
    await client.query<LexemeRow & { conversation_ms: number; conversation_erased: string | number }>(
      `SELECT w.conversation_id, m.seq, (extract(epoch FROM m.created_at) * 1000)::float8 AS at, m.search_vector::text AS lexemes,
         (extract(epoch FROM c.created_at) * 1000)::float8 AS conversation_ms, c.erased_messages AS conversation_erased
       FROM unnest($3::text[], $4::bigint[], $5::bigint[]) AS w (conversation_id, after_seq, through_seq)
       JOIN ${tables.conversations} c ON c.tenant_id = $1 AND c.user_id = $2 AND c.conversation_id = w.conversation_id
       CROSS JOIN LATERAL (
         SELECT m.seq, m.created_at, m.search_vector FROM ${tables.messages} m
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
    const count = found.get(conversationId) ?? 0;
    return mark.erased === 0 ? count === through - after : count <= through - after;
  });
  const same = rows.every((row) => {
    const mark = marks.get(row.conversation_id)!;
    return Number(row.conversation_ms) === mark.createdAt && Number(row.conversation_erased) === mark.erased;
  });
  if (!complete || !same) return undefined;
  // Every wanted range is read to its end, erased seqs at its tail included, so a gap is never waited for.
  const position = new Map(read);
  for (const [conversationId, , through] of wanted) {
    const mark = marks.get(conversationId)!;
    position.set(conversationId, { createdAt: mark.createdAt, erased: mark.erased, seq: through });
  }
  return {
    rows: rows.map((row) => {
      const lexemes = tsvectorLexemes(row.lexemes);
      return {
        key: Number(row.seq),
        conversationId: row.conversation_id,
        createdAt: Number(row.at),
        frequencies: lexemes,
        length: lexemes.size,
      };
    }),
    position,
  };
}
