import type { Random } from '../examples/create-random.js';

/**
 * A fact a user tells an assistant: what it is about (the words a later question uses), the values it
 * can take, how the user says it, how they later change it, and the question that asks for it.
 */
export interface FactSlot {
  readonly id: string;
  /** Domain words the assistant's long replies keep repeating (the echo a reply makes of the user's turn). */
  readonly topic: readonly string[];
  readonly values: readonly string[];
  readonly state: (value: string) => string;
  readonly update: (value: string, previous: string) => string;
  /** The question for the fact as first told (information extraction), and for its newest value (knowledge update). */
  readonly ask: string;
  /** The same question in other words, as people often ask it. */
  readonly askOther: string;
  readonly askNow: string;
  /** A contradiction: the user later denies the first value without announcing a change. */
  readonly contradict: (value: string, previous: string) => string;
  readonly askConflict: string;
}

/** A dated event of the user's life, told in one turn: for temporal and ordering questions. */
export interface LifeEvent {
  readonly id: string;
  readonly topic: readonly string[];
  readonly tell: (detail: string) => string;
  readonly details: readonly string[];
  /** "When did I …?" */
  readonly ask: string;
  /** Short phrase for "which came first, X or Y?" */
  readonly phrase: string;
}

/** A standing preference or instruction the user gives the assistant. */
export interface Directive {
  readonly id: string;
  readonly kind: 'preference' | 'instruction';
  readonly topic: readonly string[];
  readonly text: string;
  readonly ask: string;
}

export const factSlots: readonly FactSlot[] = [
  {
    id: 'billing-db',
    topic: ['database', 'billing', 'service', 'schema', 'queries', 'tables'],
    values: ['PostgreSQL', 'MySQL', 'DynamoDB', 'CockroachDB', 'MongoDB'],
    state: (v) =>
      `For the billing service we settled on ${v} as the database, mostly because the team already knows it.`,
    update: (v, p) => `Update on the billing service: we are moving off ${p}, the database will be ${v} from now on.`,
    ask: 'Which database did I say the billing service uses?',
    askOther: 'What datastore sits behind our invoicing backend?',
    askNow: 'What database is the billing service on now?',
    contradict: (v, p) => `The billing service has always run on ${v}, I don't think we ever used ${p} for it.`,
    askConflict: 'I gave two different databases for the billing service; which ones did I mention?',
  },
  {
    id: 'deploy',
    topic: ['deploy', 'deployment', 'cluster', 'hosting', 'production', 'release'],
    values: ['Kubernetes on GKE', 'AWS ECS with Fargate', 'Fly.io', 'a Hetzner bare-metal box', 'Azure App Service'],
    state: (v) => `We deploy the app to ${v}; production releases go out on Thursdays.`,
    update: (v, p) => `We finally left ${p}. Production deploys now go to ${v}.`,
    ask: 'Where did I tell you we deploy the app?',
    askOther: 'Where does our app run in prod?',
    askNow: 'Where do our production deploys go these days?',
    contradict: (v, p) => `Our hosting is ${v}, it never was ${p} as far as I remember.`,
    askConflict: 'I described our hosting two different ways; what did I say?',
  },
  {
    id: 'rewrite-language',
    topic: ['rewrite', 'language', 'parser', 'ingest', 'performance', 'code'],
    values: ['Rust', 'Go', 'Kotlin', 'Elixir', 'Zig'],
    state: (v) => `I'm rewriting the ingest parser in ${v}; the old Python one is too slow for the new feeds.`,
    update: (v, p) => `Change of plan on the parser rewrite: ${p} was fighting us, so it is ${v} now.`,
    ask: 'What language am I rewriting the ingest parser in?',
    askOther: 'What am I porting the slow Python feed code to?',
    askNow: 'Which language is the parser rewrite in at this point?',
    contradict: (v, p) => `The ingest parser rewrite is in ${v}; I never picked ${p} for that.`,
    askConflict: 'I named two languages for the parser rewrite; which were they?',
  },
  {
    id: 'manager',
    topic: ['manager', 'team', 'lead', 'review', 'meeting', 'feedback'],
    values: ['Anika Rao', 'Tomasz Wierzbicki', 'Lena Hoffmann', 'Marcus Bell', 'Yuki Tanaka'],
    state: (v) => `My manager is ${v}, she runs the weekly review with the whole team.`,
    update: (v, p) => `Reorg news: ${p} moved to another group, my new manager is ${v}.`,
    ask: 'Who did I say my manager is?',
    askOther: 'Who do I report to?',
    askNow: 'Who is my manager now?',
    contradict: (v, p) => `${v} has been my manager all along, not ${p}.`,
    askConflict: 'I named two different people as my manager; who?',
  },
  {
    id: 'city',
    topic: ['city', 'apartment', 'move', 'rent', 'neighbourhood', 'commute'],
    values: ['Lisbon', 'Rotterdam', 'Montreal', 'Tallinn', 'Valencia'],
    state: (v) => `I live in ${v} at the moment, in a small apartment close to the station.`,
    update: (v, p) => `Big news, I'm leaving ${p}: I signed a lease and I'm moving to ${v} next month.`,
    ask: 'Which city did I say I live in?',
    askOther: 'Where am I based?',
    askNow: 'What city am I living in now?',
    contradict: (v, p) => `I've been in ${v} for years, I never lived in ${p}.`,
    askConflict: 'I told you two different cities I live in; which?',
  },
  {
    id: 'budget',
    topic: ['budget', 'cost', 'spend', 'monthly', 'cloud', 'invoice'],
    values: ['$1,200', '$3,500', '$800', '$5,000', '$2,250'],
    state: (v) => `Our monthly cloud budget is ${v}, finance reviews the invoice every quarter.`,
    update: (v, p) => `Finance cut us back: the cloud budget is ${v} a month now instead of ${p}.`,
    ask: 'What monthly cloud budget did I give you?',
    askOther: 'How much can we spend on infrastructure each month?',
    askNow: 'What is our monthly cloud budget now?',
    contradict: (v, p) => `We have ${v} a month for cloud spend, it was never ${p}.`,
    askConflict: 'I gave two figures for the cloud budget; what were they?',
  },
  {
    id: 'editor',
    topic: ['editor', 'setup', 'plugins', 'keybindings', 'config', 'terminal'],
    values: ['Neovim', 'Emacs', 'VS Code', 'Helix', 'IntelliJ'],
    state: (v) => `My editor is ${v}, with a pretty minimal config and a few plugins.`,
    update: (v, p) => `I switched editors, ${p} is gone and I'm on ${v} full time now.`,
    ask: 'What editor did I tell you I use?',
    askOther: 'What do I write code in?',
    askNow: 'Which editor do I use these days?',
    contradict: (v, p) => `I'm a ${v} person, honestly I never used ${p} day to day.`,
    askConflict: 'I mentioned two different editors as mine; which?',
  },
  {
    id: 'queue',
    topic: ['queue', 'messages', 'events', 'consumer', 'broker', 'retries'],
    values: ['RabbitMQ', 'Kafka', 'NATS', 'SQS', 'Redis streams'],
    state: (v) => `The order events go through ${v}; the consumer does the retries itself.`,
    update: (v, p) => `We replaced ${p}, order events now flow through ${v}.`,
    ask: 'What broker did I say carries the order events?',
    askOther: 'What do we use to pass order events between services?',
    askNow: 'Which broker carries the order events now?',
    contradict: (v, p) => `Order events have always been on ${v}, we never ran ${p}.`,
    askConflict: 'I named two brokers for the order events; which?',
  },
];

export const lifeEvents: readonly LifeEvent[] = [
  {
    id: 'marathon',
    topic: ['race', 'running', 'training', 'marathon'],
    tell: (d) => `I ran my first half marathon this weekend, ${d}.`,
    details: ['finished in 1:58', 'finished in 2:04', 'finished just under two hours'],
    ask: 'When did I run my first half marathon?',
    phrase: 'my first half marathon',
  },
  {
    id: 'cat',
    topic: ['cat', 'pet', 'adopted', 'vet'],
    tell: (d) => `We adopted a cat yesterday, ${d}.`,
    details: ['a grey tabby called Miso', 'a black kitten called Pixel', 'an old tomcat called Biscuit'],
    ask: 'When did I adopt the cat?',
    phrase: 'adopting the cat',
  },
  {
    id: 'beta',
    topic: ['beta', 'launch', 'shipped', 'customers'],
    tell: (d) => `We shipped the public beta today, ${d}.`,
    details: ['forty customers signed up in the first hour', 'with only one rollback', 'two weeks late but it works'],
    ask: 'When did we ship the public beta?',
    phrase: 'shipping the public beta',
  },
  {
    id: 'talk',
    topic: ['talk', 'conference', 'slides', 'meetup'],
    tell: (d) => `I gave my talk at the meetup last night, ${d}.`,
    details: ['about thirty people came', 'the demo crashed once', 'people asked great questions'],
    ask: 'When did I give my meetup talk?',
    phrase: 'my meetup talk',
  },
  {
    id: 'interview',
    topic: ['interview', 'candidate', 'hiring', 'offer'],
    tell: (d) => `We made an offer to the backend candidate today, ${d}.`,
    details: ['she accepted on the spot', 'he wants a week to think', 'after four interview rounds'],
    ask: 'When did we make the offer to the backend candidate?',
    phrase: 'the offer to the backend candidate',
  },
  {
    id: 'outage',
    topic: ['outage', 'incident', 'postmortem', 'pager'],
    tell: (d) => `We had a nasty outage this morning, ${d}.`,
    details: ['the payments API was down for forty minutes', 'a certificate expired', 'a bad migration locked a table'],
    ask: 'When did we have the outage?',
    phrase: 'the outage',
  },
];

export const directives: readonly Directive[] = [
  {
    id: 'bullets',
    kind: 'preference',
    topic: ['format', 'answers', 'bullet', 'points'],
    text: 'I prefer short bullet points over long paragraphs in your answers.',
    ask: 'How do I like your answers formatted?',
  },
  {
    id: 'typescript',
    kind: 'preference',
    topic: ['code', 'samples', 'TypeScript', 'types'],
    text: 'For code samples I prefer TypeScript with strict types, not plain JavaScript.',
    ask: 'What language do I want code samples in?',
  },
  {
    id: 'metric',
    kind: 'preference',
    topic: ['units', 'metric', 'kilometres'],
    text: 'Please use metric units with me, kilometres and kilos, never miles.',
    ask: 'Which units do I prefer?',
  },
  {
    id: 'summary-line',
    kind: 'instruction',
    topic: ['summary', 'line', 'end', 'reply'],
    text: 'From now on, always end a long reply with a one-line summary.',
    ask: 'What did I ask you to always put at the end of long replies?',
  },
  {
    id: 'no-paid',
    kind: 'instruction',
    topic: ['paid', 'tools', 'open', 'source', 'suggest'],
    text: "Don't suggest paid tools, only open source ones, our budget can't take licences.",
    ask: 'What did I tell you about suggesting tools?',
  },
  {
    id: 'first-name',
    kind: 'instruction',
    topic: ['name', 'call', 'formal'],
    text: 'Call me by my first name, no need to be formal.',
    ask: 'How did I ask you to address me?',
  },
];

/** How-to questions that share the fact topics' words: the long answers to these are the distractors. */
export const howToQuestions: readonly ((random: Random) => {
  readonly words: readonly string[];
  readonly text: string;
})[] = [
  () => ({
    words: ['database', 'schema', 'migration', 'tables'],
    text: 'How should I plan a schema migration on a database with big tables and no downtime?',
  }),
  () => ({
    words: ['deploy', 'release', 'production', 'rollback'],
    text: 'What is a sane checklist for a production release so a rollback stays easy?',
  }),
  () => ({
    words: ['queue', 'consumer', 'retries', 'messages'],
    text: 'How do I make a queue consumer idempotent when retries deliver messages twice?',
  }),
  () => ({
    words: ['budget', 'cloud', 'cost', 'invoice'],
    text: 'Any tips to keep a cloud invoice from creeping up every month?',
  }),
  () => ({
    words: ['team', 'review', 'feedback', 'meeting'],
    text: 'How do I give feedback in a code review meeting without it feeling personal?',
  }),
  () => ({
    words: ['parser', 'performance', 'code', 'profiling'],
    text: 'What is the best way to profile parser code that is slow on big inputs?',
  }),
  () => ({
    words: ['editor', 'config', 'plugins', 'terminal'],
    text: 'Is it worth keeping my editor config in git, plugins and all?',
  }),
  () => ({
    words: ['apartment', 'rent', 'move', 'city'],
    text: 'What should I check before I sign a rent contract for an apartment in a new city?',
  }),
  () => ({ words: ['running', 'training', 'race'], text: 'How many runs a week make sense when training for a race?' }),
  () => ({
    words: ['incident', 'postmortem', 'outage'],
    text: 'How do you write a blameless postmortem after an outage?',
  }),
];

/** Short user lines that carry nothing to remember. */
export const chatter: readonly string[] = [
  'Thanks, that helps a lot.',
  'Makes sense, I will try that tomorrow.',
  'Ok, one more thing before I go.',
  'Great, let me think about it.',
  'Good morning! Back at it.',
  'Hmm, not sure I follow the second point.',
  'Perfect, that is what I needed.',
  'Long day. Quick question though.',
];

/** Generic sentences an assistant uses to fill out a long answer; `{t}` is replaced by a topic word. */
export const elaborations: readonly string[] = [
  'The main thing with {t} is to make the change reversible, so you can back out without a scramble.',
  'I would write down what "done" means for the {t} work before starting, otherwise it tends to drift.',
  'Keep an eye on the {t} numbers for the first week; most surprises show up in the first few days.',
  'If the team is small, the simplest {t} setup you can operate at 3 am beats the clever one.',
  'A short design note about the {t} decision pays for itself the next time someone asks why.',
  'Measure before and after, otherwise the {t} discussion becomes a matter of taste.',
  'It also helps to agree up front who owns the {t} part when something breaks.',
  'Do not underestimate the migration cost: moving {t} data is usually the slow part, not the code.',
  'Automate the boring {t} checks in CI so nobody has to remember them.',
  'Talk to the people downstream of the {t} change early; they usually know the edge cases.',
];

/** Code shapes an assistant puts in a reply; `{t}` is a topic word, `{v}` a value. */
export const codeSamples: readonly string[] = [
  'async function check{T}(client: Client): Promise<boolean> {\n  const started = Date.now();\n  const ok = await client.ping("{t}");\n  metrics.timing("{t}.ping", Date.now() - started);\n  return ok;\n}',
  'const config = {\n  {t}: {\n    target: "{v}",\n    retries: 3,\n    timeoutMs: 5_000,\n  },\n} as const;',
  'for (const item of pending{T}) {\n  try {\n    await process{T}(item);\n  } catch (error) {\n    log.warn({ error, item }, "{t} step failed, will retry");\n  }\n}',
  '# {t} checklist\n- [ ] staging run against {v}\n- [ ] dashboards for {t} latency\n- [ ] rollback tested\n- [ ] owners on call',
];
