import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { createRandom, type Random } from './create-random.js';
import {
  greetingExchange,
  introExchanges,
  newTripExchange,
  topicExchanges,
  type Exchange,
} from './mesh-chat-exchanges.js';
import { createMeshPersona, type MeshPersona } from './mesh-chat-persona.js';

/** One message of a generated mesh-radio chat, in the shape `memory.append` and `mnemo replay` take. */
export interface MeshChatMessage {
  readonly role: 'user' | 'assistant';
  readonly content: string;
  /** ISO 8601, UTC; strictly increasing through the chat. */
  readonly createdAt: string;
}

/** Options of {@link generateMeshChat}. */
export interface MeshChatOptions {
  /** How many messages to produce (a non-negative integer); user first, then strictly alternating. */
  readonly messages: number;
  /** Seed of the generator; the same options always give the same chat. Default 7. */
  readonly seed?: number;
  /** Node id of the user's radio (`!` + 8 hex digits); default drawn from the seed. */
  readonly nodeId?: string;
}

/** Longest text one mesh packet carries, in characters; every generated content fits. */
export const maxRadioMessageChars = 150;

const minuteMs = 60_000;
const hourMs = 60 * minuteMs;

/**
 * Generates a realistic, deterministic chat between a hiker's mesh node and the bot: the user states
 * facts early (name, callsign, node, home, trip, battery, relay, budget), then asks, reports, recalls
 * and now and then changes a fact, over sessions spread across days. Throws `RangeError` for a bad count or seed.
 */
export function generateMeshChat(options: MeshChatOptions): MeshChatMessage[] {
  const { messages } = options;
  if (!Number.isInteger(messages) || messages < 0)
    throw new RangeError(`messages must be a non-negative integer (got ${messages})`);
  const seed = options.seed ?? 7;
  if (!Number.isInteger(seed)) throw new RangeError(`seed must be an integer (got ${seed})`);
  const random = createRandom(seed);
  const startDay = new Date(Date.UTC(2025, random.integer(2, 6), random.integer(1, 28)));
  const persona = createMeshPersona(random, startDay, options.nodeId);
  // The first message falls between 06:00 and 20:00 at the user's place; stamps are UTC.
  const localStartMs = (random.integer(6, 19) * 60 + random.integer(0, 59)) * minuteMs;
  let time = new Date(startDay.getTime() + localStartMs - persona.region.utcOffsetHours * hourMs);
  const chat: MeshChatMessage[] = [];
  let sessionBreak = false;
  for (let exchangeIndex = 0; chat.length < messages; exchangeIndex += 1) {
    if (exchangeIndex > 0) ({ time, sessionBreak } = advanceClock(random, time, persona.region.utcOffsetHours));
    const exchange = chooseExchange(random, persona, exchangeIndex, time, sessionBreak);
    const [user, assistant] = exchange({ random, persona, now: time });
    chat.push({ role: 'user', content: fitRadioPacket(user), createdAt: time.toISOString() });
    // The bot answers within a minute: the LLM call plus a packet or two of airtime.
    time = new Date(time.getTime() + random.integer(12, 60) * 1000);
    if (chat.length < messages)
      chat.push({ role: 'assistant', content: fitRadioPacket(assistant), createdAt: time.toISOString() });
  }
  return chat;
}

/** Minutes between messages inside a session; now and then a gap of hours to a couple of days. */
function advanceClock(random: Random, time: Date, utcOffsetHours: number): { time: Date; sessionBreak: boolean } {
  const sessionBreak = random.chance(0.12);
  if (!sessionBreak)
    return {
      time: new Date(time.getTime() + random.integer(1, 7) * minuteMs + random.integer(0, 59) * 1000),
      sessionBreak,
    };
  const next = new Date(time.getTime() + random.integer(6, 44) * hourMs + random.integer(0, 59) * minuteMs);
  // Hikers sleep: a session that would start between 23:00 and 06:00 local starts after 06:00 instead.
  const localHour = (next.getUTCHours() + utcOffsetHours + 24) % 24;
  const sleptHours = localHour >= 23 ? 24 - localHour + 6 : localHour < 6 ? 6 - localHour : 0;
  return { time: new Date(next.getTime() + sleptHours * hourMs + random.integer(0, 150) * minuteMs), sessionBreak };
}

function chooseExchange(
  random: Random,
  persona: MeshPersona,
  exchangeIndex: number,
  time: Date,
  sessionBreak: boolean,
): Exchange {
  const intro = introExchanges[exchangeIndex];
  if (intro !== undefined) return intro;
  const tripEndMs = persona.trip.startDate.getTime() + persona.trip.route.days * 24 * hourMs;
  if (time.getTime() > tripEndMs) return newTripExchange;
  if (sessionBreak && random.chance(0.6)) return greetingExchange;
  const totalWeight = topicExchanges.reduce((sum, [, weight]) => sum + weight, 0);
  let ticket = random.next() * totalWeight;
  for (const [exchange, weight] of topicExchanges) {
    ticket -= weight;
    if (ticket < 0) return exchange;
  }
  return topicExchanges[topicExchanges.length - 1]![0];
}

/** Cuts a text that would not fit one packet at a word boundary; the templates are written not to need it. */
function fitRadioPacket(text: string): string {
  if (text.length <= maxRadioMessageChars) return text;
  const cut = text.slice(0, maxRadioMessageChars - 1);
  const lastSpace = cut.lastIndexOf(' ');
  return `${cut.slice(0, lastSpace > 100 ? lastSpace : cut.length)}…`;
}

function runFromCommandLine(): void {
  const { values } = parseArgs({
    options: { messages: { type: 'string', default: '100' }, seed: { type: 'string' }, 'node-id': { type: 'string' } },
  });
  const messages = Number(values.messages);
  const chat = generateMeshChat({
    messages,
    ...(values.seed === undefined ? {} : { seed: Number(values.seed) }),
    ...(values['node-id'] === undefined ? {} : { nodeId: values['node-id'] }),
  });
  process.stdout.write(chat.map((message) => JSON.stringify(message)).join('\n') + (chat.length > 0 ? '\n' : ''));
}

// Runs only as a script (`tsx examples/generate-mesh-chat.ts`), not when the benchmark imports it.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) runFromCommandLine();
