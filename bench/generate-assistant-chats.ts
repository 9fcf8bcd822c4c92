import { writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { monthNames } from '@mnemo/core/internals';
import { createRandom, type Random } from '../examples/create-random.js';
import {
  chatter,
  codeSamples,
  directives,
  elaborations,
  factSlots,
  howToQuestions,
  lifeEvents,
  type Directive,
  type FactSlot,
  type LifeEvent,
} from './assistant-chat-topics.js';

/** The abilities the questions test (issue 23), each mapped onto a LoCoMo category number for the shared scorer. */
export const assistantChatAbilities = {
  'information-extraction': 4,
  'multi-session': 1,
  'knowledge-update': 3,
  temporal: 2,
  'event-ordering': 2,
  contradiction: 3,
  preference: 4,
  instruction: 4,
  summarization: 1,
} as const;

/** One of {@link assistantChatAbilities}. */
export type AssistantChatAbility = keyof typeof assistantChatAbilities;

interface Turn {
  speaker: string;
  dia_id: string;
  text: string;
}

interface Question {
  question: string;
  answer: string;
  evidence: string[];
  category: number;
  ability: AssistantChatAbility;
}

/** A chat in LoCoMo's JSON shape (`mnemo bench locomo --data` reads it), with each question's `ability` beside its category. */
export interface AssistantChatSample {
  sample_id: string;
  conversation: Record<string, string | Turn[]>;
  qa: Question[];
}

/** Options of {@link generateAssistantChats}. */
export interface AssistantChatOptions {
  /** Chats to generate; default 30. */
  readonly chats?: number;
  /** Seed; the same options always give the same chats. Default 23. */
  readonly seed?: number;
  /** Chats that are held out (the last ones, ids `ua-h-…`); the rest are the tuning part (`ua-t-…`). Default a third. */
  readonly heldOut?: number;
}

const userNames = [
  'Priya',
  'Jonas',
  'Mei',
  'Diego',
  'Amara',
  'Oskar',
  'Leila',
  'Tariq',
  'Sofia',
  'Kenji',
  'Ines',
  'Rafael',
  'Hana',
  'Bjorn',
  'Zanele',
];
const assistantName = 'Assistant';
const months = monthNames.map((name) => name[0]!.toUpperCase() + name.slice(1));

/**
 * Generates user–assistant chats in LoCoMo's format: 3–5 dated sessions each, a user who states facts
 * about work and life in short turns, changes some of them later (an announced update or a silent
 * contradiction), tells dated events and standing preferences, and asks how-to questions; an assistant
 * that answers every turn at length, restating the user's words and elaborating them (numbered plans,
 * code, several paragraphs), and in later sessions keeps referring back to what the user said. Questions
 * over nine abilities point at the turns that hold the answer, most of them the user's own.
 */
export function generateAssistantChats(options: AssistantChatOptions = {}): AssistantChatSample[] {
  const chats = options.chats ?? 30;
  const seed = options.seed ?? 23;
  const heldOut = options.heldOut ?? Math.round(chats / 3);
  if (!Number.isInteger(chats) || chats < 1) throw new RangeError(`chats must be a positive integer (got ${chats})`);
  if (!Number.isInteger(heldOut) || heldOut < 0 || heldOut >= chats)
    throw new RangeError(`heldOut must be an integer from 0 to chats − 1 (got ${heldOut})`);
  return Array.from({ length: chats }, (_, index) => {
    const held = index >= chats - heldOut;
    const id = held
      ? `ua-h-${String(index - (chats - heldOut) + 1).padStart(2, '0')}`
      : `ua-t-${String(index + 1).padStart(2, '0')}`;
    return generateChat(createRandom(seed * 1_000 + index), id);
  });
}

interface Plan {
  readonly session: number;
  readonly build: (context: ChatContext) => {
    user: string;
    reply: string;
    onTold?: (userId: string, replyId: string) => void;
  };
}

interface ChatContext {
  readonly random: Random;
  /** What the user said so far, by fact slot: the assistant brings it back up later. */
  readonly known: Map<string, string>;
}

function generateChat(random: Random, sampleId: string): AssistantChatSample {
  const user = random.pick(userNames);
  const sessionCount = random.integer(3, 5);
  const slots = shuffle(random, factSlots).slice(0, 5);
  const events = shuffle(random, lifeEvents).slice(0, Math.min(sessionCount, 3));
  const chosenDirectives = shuffle(random, directives).slice(0, 3);
  const qa: Question[] = [];
  const plans: Plan[] = [];
  const told = new Map<string, { user: string; reply: string; session: number }[]>();
  const note = (key: string, session: number) => (userId: string, replyId: string) => {
    const list = told.get(key) ?? [];
    list.push({ user: userId, reply: replyId, session });
    told.set(key, list);
  };
  const values = new Map<string, string[]>();
  const changes = new Map<string, 'update' | 'contradiction'>();
  for (const slot of slots) {
    const [first, second] = shuffle(random, slot.values);
    const session = random.integer(0, sessionCount - 2);
    values.set(slot.id, [first!]);
    plans.push({
      session,
      build: (context) => statement(context, slot, first!, slot.state(first!), note(slot.id, session)),
    });
    const change = random.next();
    if (change < 0.5) {
      const later = random.integer(session + 1, sessionCount - 1);
      changes.set(slot.id, 'update');
      values.get(slot.id)!.push(second!);
      plans.push({
        session: later,
        build: (context) => statement(context, slot, second!, slot.update(second!, first!), note(slot.id, later)),
      });
    } else if (change < 0.7) {
      const later = random.integer(session + 1, sessionCount - 1);
      changes.set(slot.id, 'contradiction');
      values.get(slot.id)!.push(second!);
      plans.push({
        session: later,
        build: (context) => statement(context, slot, second!, slot.contradict(second!, first!), note(slot.id, later)),
      });
    }
  }
  const eventSessions = shuffle(
    random,
    Array.from({ length: sessionCount }, (_, at) => at),
  )
    .slice(0, events.length)
    .sort((a, b) => a - b);
  const eventDetails = new Map<string, string>();
  events.forEach((event, at) => {
    const detail = random.pick(event.details);
    eventDetails.set(event.id, detail);
    plans.push({
      session: eventSessions[at]!,
      build: (context) => eventTurn(context, event, detail, note(event.id, eventSessions[at]!)),
    });
  });
  for (const directive of chosenDirectives) {
    const session = random.integer(0, sessionCount - 1);
    plans.push({ session, build: (context) => directiveTurn(context, directive, note(directive.id, session)) });
  }
  // Follow-ups on each fact's topic in the user's words (not evidence of the fact, but sharing its words),
  // answered at length with what the user said about it: the echoes that crowd a real chat's rankings.
  for (const slot of slots) {
    for (let at = random.integer(3, 6); at > 0; at -= 1) {
      const session = random.integer(0, sessionCount - 1);
      plans.push({ session, build: (context) => followUp(context, slot) });
    }
  }
  const recommendations: { question: string; answer: string; key: string }[] = [];
  for (let session = 0; session < sessionCount; session += 1) {
    const count = random.integer(6, 10);
    for (let at = 0; at < count; at += 1) {
      const key = `howto-${session}-${at}`;
      plans.push({ session, build: (context) => howTo(context, key, recommendations, note(key, session)) });
    }
  }
  // Sessions: a few days to a few weeks apart, each plan in its session in a shuffled order.
  const conversation: Record<string, string | Turn[]> = { speaker_a: user, speaker_b: assistantName };
  const context: ChatContext = { random, known: new Map() };
  let day = Date.UTC(2024, random.integer(0, 8), random.integer(1, 28));
  const sessionDates: number[] = [];
  for (let session = 0; session < sessionCount; session += 1) {
    if (session > 0) day += random.integer(3, 24) * 86_400_000;
    sessionDates.push(day);
    const hour = random.integer(8, 21);
    const minute = random.integer(0, 59);
    conversation[`session_${session + 1}_date_time`] =
      `${((hour + 11) % 12) + 1}:${String(minute).padStart(2, '0')} ${hour < 12 ? 'am' : 'pm'} on ${new Date(day).getUTCDate()} ${months[new Date(day).getUTCMonth()]}, ${new Date(day).getUTCFullYear()}`;
    const turns: Turn[] = [];
    const inSession = shuffle(
      random,
      plans.filter((plan) => plan.session === session),
    );
    for (const plan of inSession) {
      if (random.chance(0.25)) {
        // A bare chatter line and a short reply: the short turns a real chat has between the long ones.
        turns.push({ speaker: user, dia_id: `D${session + 1}:${turns.length + 1}`, text: random.pick(chatter) });
        turns.push({
          speaker: assistantName,
          dia_id: `D${session + 1}:${turns.length + 1}`,
          text: random.pick(['Sure, go ahead.', 'Happy to help.', 'Of course, what is it?', 'Glad it helped.']),
        });
      }
      const built = plan.build(context);
      const userId = `D${session + 1}:${turns.length + 1}`;
      turns.push({ speaker: user, dia_id: userId, text: built.user });
      const replyId = `D${session + 1}:${turns.length + 1}`;
      turns.push({ speaker: assistantName, dia_id: replyId, text: built.reply });
      built.onTold?.(userId, replyId);
    }
    conversation[`session_${session + 1}`] = turns;
  }
  const dateOf = (session: number) => formatDay(sessionDates[session]!);
  // Questions.
  const techSlots: string[] = [];
  for (const slot of slots) {
    const said = told.get(slot.id)!;
    const [first, second] = values.get(slot.id)!;
    qa.push(question(random.chance(0.5) ? slot.askOther : slot.ask, first!, [said[0]!.user], 'information-extraction'));
    if (changes.get(slot.id) === 'update')
      qa.push(question(slot.askNow, second!, [said[0]!.user, said[1]!.user], 'knowledge-update'));
    if (changes.get(slot.id) === 'contradiction')
      qa.push(question(slot.askConflict, `${first} and ${second}`, [said[0]!.user, said[1]!.user], 'contradiction'));
    techSlots.push(said[0]!.user);
  }
  qa.push(
    question(
      'Across our chats, what have I told you about my work setup and the tools we use?',
      'see evidence',
      techSlots,
      'multi-session',
    ),
  );
  const summarized = slots.find((slot) => told.get(slot.id)!.length > 1) ?? slots[0]!;
  qa.push(
    question(
      `Summarize what we discussed about the ${summarized.topic[0]} and ${summarized.topic[1]} over time.`,
      values.get(summarized.id)!.join(' → '),
      told.get(summarized.id)!.flatMap((said) => [said.user, said.reply]),
      'summarization',
    ),
  );
  for (const event of events) {
    const said = told.get(event.id)![0]!;
    qa.push(
      question(event.ask, `around ${dateOf(said.session)} (${eventDetails.get(event.id)})`, [said.user], 'temporal'),
    );
  }
  for (let at = 0; at + 1 < events.length; at += 1) {
    const [a, b] = [events[at]!, events[at + 1]!];
    const [first, second] = random.chance(0.5) ? [a, b] : [b, a];
    qa.push(
      question(
        `Which happened first, ${first.phrase} or ${second.phrase}?`,
        a.phrase,
        [told.get(first.id)![0]!.user, told.get(second.id)![0]!.user],
        'event-ordering',
      ),
    );
  }
  for (const directive of chosenDirectives)
    qa.push(question(directive.ask, directive.text, [told.get(directive.id)![0]!.user], directive.kind));
  // Only how-to questions asked once in the chat can be asked about without ambiguity.
  const asked = recommendations.map(
    (recommendation) => `${recommendation.question} ${told.get(recommendation.key)![0]!.session}`,
  );
  const unique = recommendations.filter((_, at) => asked.indexOf(asked[at]!) === asked.lastIndexOf(asked[at]!));
  for (const recommendation of shuffle(random, unique).slice(0, 6)) {
    const said = told.get(recommendation.key)![0]!;
    qa.push(
      question(
        `${recommendation.question} on ${dateOf(said.session)}?`,
        recommendation.answer,
        [said.reply],
        'information-extraction',
      ),
    );
  }
  return { sample_id: sampleId, conversation, qa };
}

function question(text: string, answer: string, evidence: string[], ability: AssistantChatAbility): Question {
  return {
    question: text,
    answer,
    evidence: [...new Set(evidence)],
    category: assistantChatAbilities[ability],
    ability,
  };
}

// The user states (or changes) a fact; the assistant restates it and elaborates at length.
function statement(
  context: ChatContext,
  slot: FactSlot,
  value: string,
  text: string,
  onTold: (userId: string, replyId: string) => void,
) {
  context.known.set(slot.id, value);
  const { random } = context;
  const opener = random.pick([
    `So, to make sure I have it right: ${lowerFirst(text)}`,
    `Got it. ${text}`,
    `Noted: ${lowerFirst(text)}`,
    `Thanks for the context. ${text}`,
  ]);
  const preamble = random.pick([
    '',
    'Long week here. ',
    'We had planning today and a lot came up. ',
    'Before I forget, ',
    'Context for later: ',
    'Small thing, but it matters for what we discussed. ',
  ]);
  return {
    user: `${preamble}${text}${random.pick(['', '', ' Anyway, more on that later.', ' Not sure it was the right call.'])}`,
    reply: longReply(context, opener, slot.topic, value, text),
    onTold,
  };
}

function eventTurn(
  context: ChatContext,
  event: LifeEvent,
  detail: string,
  onTold: (userId: string, replyId: string) => void,
) {
  const text = event.tell(detail);
  const opener = context.random.pick([
    `Congratulations! ${text.replace(/^I /, 'You ').replace(/^We /, 'You ')}`,
    `That is a big one. ${text}`,
    `Oh wow. ${text}`,
  ]);
  return { user: text, reply: longReply(context, opener, event.topic, detail, text), onTold };
}

function directiveTurn(context: ChatContext, directive: Directive, onTold: (userId: string, replyId: string) => void) {
  const opener = `Understood. ${directive.text
    .replace(/^I prefer/, 'You prefer')
    .replace(/^Please /, '')
    .replace(/^From now on, /, 'From now on I will ')}`;
  return {
    user: directive.text,
    reply: longReply(context, opener, directive.topic, directive.topic[0]!, directive.text),
    onTold,
  };
}

const followUpAsks = [
  'how would you monitor it?',
  'what should we test first?',
  'how do I write it up for the team?',
  'what are the risks to watch?',
  'how do we roll it back if it goes wrong?',
  'what would you change first?',
  'is there anything I am missing?',
];

function followUp(context: ChatContext, slot: FactSlot) {
  const { random } = context;
  const [first, second] = shuffle(random, slot.topic);
  const text = `${random.pick(['One more thing on the', 'Back to the', 'Still thinking about the', 'About the'])} ${first} ${second}: ${random.pick(followUpAsks)}`;
  const known = context.known.get(slot.id);
  const recalled =
    known === undefined
      ? ''
      : ` You told me earlier: ${lowerFirst(slot.state(known))} With ${known} in mind, here is what I would do.`;
  return {
    user: text,
    reply: longReply(context, `Sure, the ${first} ${second} again.${recalled}`, slot.topic, known ?? first!, text),
  };
}

// A how-to question; the answer names a tool, and in later sessions ties itself to what the user said.
function howTo(
  context: ChatContext,
  key: string,
  recommendations: { question: string; answer: string; key: string }[],
  onTold: (userId: string, replyId: string) => void,
) {
  const { random } = context;
  const asked = random.pick(howToQuestions)(random);
  const related = factSlots.find(
    (slot) => slot.topic.some((word) => asked.words.includes(word)) && context.known.has(slot.id),
  );
  const recalled =
    related === undefined
      ? ''
      : ` Since ${related.state(context.known.get(related.id)!).replace(/^(For|My|Our|We|I|The)\b/, (word) => word.toLowerCase())} `;
  const tool = random.pick([
    'pgroll',
    'Flyway',
    'Argo Rollouts',
    'Infracost',
    'OpenTelemetry',
    'pprof',
    'chezmoi',
    'Renovate',
    'k6',
    'Grafana OnCall',
  ]);
  recommendations.push({
    question: `${asked.text.replace(/\?$/, '')} — which tool did you suggest for that`,
    answer: tool,
    key,
  });
  const opener = `Good question: ${lowerFirst(asked.text)}${recalled} I would start with ${tool}.`;
  return { user: asked.text, reply: longReply(context, opener, asked.words, tool, asked.text), onTold };
}

// An assistant answer of 150–500 words: the opener restating the user, a numbered plan that repeats the
// topic's words and the value, a code block, and paragraphs of advice.
function longReply(
  context: ChatContext,
  opener: string,
  topic: readonly string[],
  value: string,
  echoed: string,
): string {
  const { random } = context;
  const word = () => random.pick(topic);
  const fill = (template: string) =>
    template.replaceAll('{t}', word()).replaceAll('{T}', capitalize(word())).replaceAll('{v}', value);
  const steps = Array.from(
    { length: random.integer(3, 6) },
    (_, at) =>
      `${at + 1}. ${capitalize(word())}: ${fill(random.pick(elaborations))} With ${value}, ${fill(random.pick(elaborations)).replace(/^./, (c) => c.toLowerCase())}`,
  );
  const paragraphs = Array.from({ length: random.integer(1, 3) }, () =>
    Array.from({ length: random.integer(2, 4) }, () => fill(random.pick(elaborations))).join(' '),
  );
  const code = random.chance(0.6) ? `\n\n\`\`\`ts\n${fill(random.pick(codeSamples))}\n\`\`\`` : '';
  const recap = random.chance(0.5) ? `\n\nTo recap what you told me: ${lowerFirst(echoed)}` : '';
  return `${opener}\n\nHere is how I would approach it:\n\n${steps.join('\n')}${code}\n\n${paragraphs.join('\n\n')}${recap}`;
}

function shuffle<T>(random: Random, items: readonly T[]): T[] {
  const copy = [...items];
  for (let at = copy.length - 1; at > 0; at -= 1) {
    const other = random.integer(0, at);
    [copy[at], copy[other]] = [copy[other]!, copy[at]!];
  }
  return copy;
}

function formatDay(time: number): string {
  const date = new Date(time);
  return `${date.getUTCDate()} ${months[date.getUTCMonth()]} ${date.getUTCFullYear()}`;
}

function lowerFirst(text: string): string {
  return /^I\b/.test(text) ? text : text.replace(/^./, (c) => c.toLowerCase());
}

function capitalize(text: string): string {
  return text.replace(/^./, (c) => c.toUpperCase());
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      out: { type: 'string' },
      chats: { type: 'string' },
      seed: { type: 'string' },
      'held-out': { type: 'string' },
      split: { type: 'string' },
    },
  });
  const all = generateAssistantChats({
    ...(values.chats === undefined ? {} : { chats: Number(values.chats) }),
    ...(values.seed === undefined ? {} : { seed: Number(values.seed) }),
    ...(values['held-out'] === undefined ? {} : { heldOut: Number(values['held-out']) }),
  });
  const split = values.split ?? 'all';
  if (!['all', 'tuning', 'held-out'].includes(split))
    throw new RangeError(`--split must be all, tuning or held-out (got ${split})`);
  const chosen = all.filter(
    (sample) => split === 'all' || (split === 'tuning') === sample.sample_id.startsWith('ua-t-'),
  );
  const text = `${JSON.stringify(chosen, null, 1)}\n`;
  if (values.out === undefined) process.stdout.write(text);
  else writeFileSync(values.out, text);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
