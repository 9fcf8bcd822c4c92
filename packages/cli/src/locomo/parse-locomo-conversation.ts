import { MemoryError } from '@mnemo/core';
import { z } from 'zod';
import { parseSessionDate, sessionDateExamples, slashOrderOf, type SlashOrder } from './parse-session-date.js';

/** Seconds between consecutive turns of a session: LoCoMo dates only each session's start. */
export const locomoSecondsPerTurn = 10;

/** One turn of a LoCoMo conversation, ready to append: `speaker_a` is the user, `speaker_b` the assistant. */
export interface LocomoTurn {
  /** `D<session>:<index>`, unique within the conversation. */
  readonly diaId: string;
  readonly session: number;
  readonly role: 'user' | 'assistant';
  /** The speaker's first name (the message's `name`). */
  readonly speaker: string;
  /** The text, plus ` [shared image: <blip_caption>]` on an image turn. */
  readonly content: string;
  /** ISO 8601: the session's start plus {@link locomoSecondsPerTurn} seconds per turn; absent when no session has a date. */
  readonly createdAt?: string;
}

/** One sample of a LoCoMo-format file: its speakers and turns, and its raw `qa` list (absent in a transcript-only file). */
export interface LocomoConversation {
  readonly sampleId: string;
  readonly speakerA: string;
  readonly speakerB: string;
  readonly turns: readonly LocomoTurn[];
  readonly qa: readonly unknown[];
  /** Sessions whose date was unreadable and dated from session order instead (`lenient` only), one line each. */
  readonly warnings: readonly string[];
}

/** Options of {@link parseLocomoConversation}. */
export interface ParseLocomoOptions {
  /** Date a session whose date cannot be read from its neighbours in session order, with a warning, instead of refusing the file. */
  readonly lenient?: boolean;
}

/** Where a sample sits, for messages: the file's name and text (to name the line of a bad date) and the sample's position. */
export interface LocomoSource {
  readonly source: string;
  readonly text: string;
  readonly index: number;
}

const turnSchema = z.looseObject({
  speaker: z.string().min(1),
  dia_id: z.string().min(1),
  text: z.string(),
  blip_caption: z.string().optional(),
});
const sampleSchema = z.looseObject({
  sample_id: z.string().min(1),
  conversation: z.looseObject({ speaker_a: z.string().min(1), speaker_b: z.string().min(1) }),
  qa: z.array(z.unknown()).optional(),
});
const sessionKey = /^session_(\d+)$/;

/** Parses a LoCoMo-format file's text into its samples (raw); throws `invalid_input` unless it is a non-empty JSON array. */
export function readLocomoSamples(text: string, source: string): unknown[] {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw invalid(`${source} is not valid JSON: ${(error as Error).message}`, error);
  }
  if (!Array.isArray(json) || json.length === 0)
    throw invalid(`${source} must be a non-empty JSON array of LoCoMo samples`);
  return json;
}

/**
 * The one LoCoMo-format reader behind `mnemo replay` and `mnemo bench locomo` (see
 * `shared/data/locomo/README.md`). Sessions are the `session_<n>` keys holding an array, in numeric
 * order (stray `session_<n>_date_time` keys are ignored); a session's date is read by
 * `parseSessionDate` (LoCoMo's own form, ISO 8601, `DD.MM.YYYY, HH:MM:SS`, `YYYY-MM-DD HH:MM`, textual
 * and slash dates — the day/month order of slash dates is taken from the file's unambiguous ones, or
 * from the order that keeps sessions chronological). An unreadable date is refused with its line in the
 * file, unless `lenient`: then the session is dated just after the previous one (or before the next)
 * and a warning says so. Throws `invalid_input` naming the source, sample and field.
 */
export function parseLocomoConversation(
  raw: unknown,
  where: LocomoSource,
  options: ParseLocomoOptions = {},
): LocomoConversation {
  const label = `${where.source} [${where.index}]`;
  const parsed = sampleSchema.safeParse(raw);
  if (!parsed.success) throw schemaError(label, parsed.error);
  const { sample_id: sampleId, conversation, qa } = parsed.data;
  const name = `${where.source} ${sampleId}`;
  const sessions = Object.entries(conversation)
    .flatMap(([key, value]) => {
      const match = sessionKey.exec(key);
      return match !== null && Array.isArray(value) ? [{ number: Number(match[1]), raw: value as unknown[] }] : [];
    })
    .sort((a, b) => a.number - b.number);
  if (sessions.length === 0) throw invalid(`${name}: the conversation has no session_<n> arrays`);
  const dated = dateSessions(
    sessions.map((session) => ({
      number: session.number,
      turns: session.raw.length,
      value: conversation[`session_${session.number}_date_time`],
    })),
    { ...where, name },
    options,
  );
  const turns = sessions.flatMap((session, position) =>
    parseTurns(conversation, session, dated.starts[position], name),
  );
  const known = new Set<string>();
  for (const turn of turns) {
    if (known.has(turn.diaId)) throw invalid(`${name}: dia_id ${turn.diaId} appears twice`);
    known.add(turn.diaId);
  }
  return {
    sampleId,
    speakerA: conversation.speaker_a,
    speakerB: conversation.speaker_b,
    turns,
    qa: qa ?? [],
    warnings: dated.warnings,
  };
}

interface SessionDate {
  readonly number: number;
  readonly turns: number;
  readonly value: unknown;
}

function dateSessions(
  sessions: readonly SessionDate[],
  where: LocomoSource & { name: string },
  options: ParseLocomoOptions,
): { starts: (Date | undefined)[]; warnings: string[] } {
  const slashOrder = pickSlashOrder(sessions);
  const read = sessions.map((session) =>
    typeof session.value === 'string' || typeof session.value === 'number'
      ? parseSessionDate(session.value, slashOrder === undefined ? {} : { slashOrder })
      : undefined,
  );
  const warnings: string[] = [];
  sessions.forEach((session, position) => {
    if (session.value === undefined || read[position] !== undefined) return;
    const key = `session_${session.number}_date_time`;
    const line = lineOf(where.text, key, session.value, sampleOffset(where.text, where.index));
    const problem = `${where.name}: ${key} ${JSON.stringify(session.value)}${line === undefined ? '' : ` (line ${line})`} is not a date`;
    if (options.lenient !== true) {
      throw invalid(
        `${problem}; readable forms: ${sessionDateExamples.map((example) => JSON.stringify(example)).join(', ')} (or --lenient to date it by session order)`,
        undefined,
        key,
      );
    }
    warnings.push(`${problem}: dated by session order`);
  });
  if (read.every((date) => date === undefined)) return { starts: read, warnings };
  // Sessions without a readable date follow the previous session's last turn (or precede the next
  // dated one), so the conversation stays in session order and the other dates stay exact.
  const starts = [...read];
  const step = locomoSecondsPerTurn * 1000;
  for (let position = 0; position < starts.length; position += 1) {
    const previous = starts[position - 1];
    if (starts[position] === undefined && previous !== undefined)
      starts[position] = new Date(previous.getTime() + sessions[position - 1]!.turns * step);
  }
  for (let position = starts.length - 1; position >= 0; position -= 1) {
    const next = starts[position + 1];
    if (starts[position] === undefined && next !== undefined)
      starts[position] = new Date(next.getTime() - (sessions[position]!.turns + 1) * step);
  }
  return { starts, warnings };
}

function pickSlashOrder(sessions: readonly SessionDate[]): SlashOrder | undefined {
  const texts = sessions.flatMap((session) => (typeof session.value === 'string' ? [session.value] : []));
  const proven = new Set(texts.map(slashOrderOf).filter((order) => order !== undefined));
  if (proven.size === 1) return [...proven][0];
  if (proven.size > 1) return undefined;
  // Nothing proves the order: take the one under which the sessions are in chronological order.
  const chronological = (['day-first', 'month-first'] as const).filter((order) => {
    const times = texts.map((text) => parseSessionDate(text, { slashOrder: order })?.getTime());
    return times.every((time, index) => time !== undefined && (index === 0 || time >= times[index - 1]!));
  });
  return chronological.length === 1 ? chronological[0] : undefined;
}

function lineOf(text: string, key: string, value: unknown, from: number): number | undefined {
  const pattern = new RegExp(`"${key}"\\s*:\\s*${escapeRegExp(JSON.stringify(value))}`, 'g');
  pattern.lastIndex = from;
  const match = pattern.exec(text);
  return match === null ? undefined : text.slice(0, match.index).split('\n').length;
}

// Where the index-th element of the top-level JSON array starts, so a bad date is found in its own
// sample and not in an earlier one with the same text. Strings are skipped; 0 if the text is odd.
function sampleOffset(text: string, index: number): number {
  let depth = 0;
  let element = -1;
  for (let at = 0; at < text.length; at += 1) {
    const char = text[at]!;
    if (char === '"') {
      for (at += 1; at < text.length && text[at] !== '"'; at += 1) if (text[at] === '\\') at += 1;
      continue;
    }
    if (char === '[' || char === '{') {
      if (depth === 1 && (element += 1) === index) return at;
      depth += 1;
    } else if (char === ']' || char === '}') depth -= 1;
  }
  return 0;
}

function escapeRegExp(value: string): string {
  return value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function parseTurns(
  conversation: { speaker_a: string; speaker_b: string },
  session: { number: number; raw: unknown[] },
  start: Date | undefined,
  name: string,
): LocomoTurn[] {
  return session.raw.map((raw, position) => {
    const location = `${name}: session_${session.number}[${position}]`;
    const parsed = turnSchema.safeParse(raw);
    if (!parsed.success) throw schemaError(location, parsed.error);
    const turn = parsed.data;
    const role =
      turn.speaker === conversation.speaker_a
        ? 'user'
        : turn.speaker === conversation.speaker_b
          ? 'assistant'
          : undefined;
    if (role === undefined)
      throw invalid(
        `${location} (${turn.dia_id}): speaker ${JSON.stringify(turn.speaker)} is neither speaker_a nor speaker_b`,
      );
    const caption = turn.blip_caption?.trim() ?? '';
    const content = [turn.text.trim() === '' ? '' : turn.text, caption === '' ? '' : `[shared image: ${caption}]`]
      .filter((part) => part !== '')
      .join(' ');
    if (content === '') throw invalid(`${location} (${turn.dia_id}): the turn has no text and no caption`);
    return {
      diaId: turn.dia_id,
      session: session.number,
      role,
      speaker: turn.speaker,
      content,
      ...(start === undefined
        ? {}
        : { createdAt: new Date(start.getTime() + position * locomoSecondsPerTurn * 1000).toISOString() }),
    };
  });
}

function invalid(message: string, cause?: unknown, field?: string): MemoryError {
  return new MemoryError('invalid_input', message, {
    ...(cause === undefined ? {} : { cause }),
    ...(field === undefined ? {} : { details: { field } }),
  });
}

/** A zod failure as `invalid_input` naming the location and each problem's path. */
export function schemaError(location: string, error: z.ZodError): MemoryError {
  const problems = error.issues.map((issue) => `${issue.path.map(String).join('.') || 'value'}: ${issue.message}`);
  return invalid(`${location}: ${problems.join('; ')}`);
}

/** `invalid_input` with a message (and its cause). */
export function invalidLocomo(message: string, cause?: unknown): MemoryError {
  return invalid(message, cause);
}
