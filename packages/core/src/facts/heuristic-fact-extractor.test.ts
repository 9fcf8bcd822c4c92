import { describe, expect, it } from 'vitest';
import type { SummarySourceMessage } from '../messages/summary-source-message.js';
import type { Fact } from './fact.js';
import type { ExtractedFact } from './fact-extractor.js';
import { HeuristicFactExtractor } from './heuristic-fact-extractor.js';

const extractor = new HeuristicFactExtractor();

function userMessages(...contents: string[]): SummarySourceMessage[] {
  return contents.map((content, index) => ({
    seq: index + 1,
    role: 'user',
    content,
    createdAt: `2025-05-29T02:4${index}:00.000Z`,
  }));
}

async function extract(...contents: string[]): Promise<ExtractedFact[]> {
  return extractor.extract({ messages: userMessages(...contents), knownFacts: [] });
}

/** `subject attribute=value` (with ` (negate)`), the shape most assertions read best in. */
async function read(...contents: string[]): Promise<string[]> {
  return (await extract(...contents)).map(
    (fact) => `${fact.subject} ${fact.attribute}=${fact.value}${fact.polarity === 'negate' ? ' (negate)' : ''}`,
  );
}

describe('HeuristicFactExtractor', () => {
  it('reads identity facts with the sentence verbatim, the message seq and confidence by pattern strength', async () => {
    const facts = await extract(
      'hey there',
      "I'm Maren, callsign N0CALL. this node is !a3f9c2d1, a RAK4631 in a small case. home base is Hood River",
    );
    expect(facts.map((fact) => [fact.attribute, fact.value, fact.text, fact.sourceSeqs])).toEqual([
      ['name', 'Maren', "I'm Maren, callsign N0CALL.", [2]],
      ['callsign', 'N0CALL', "I'm Maren, callsign N0CALL.", [2]],
      ['node_id', '!a3f9c2d1', 'this node is !a3f9c2d1, a RAK4631 in a small case.', [2]],
      ['home_town', 'Hood River', 'home base is Hood River', [2]],
    ]);
    const [stated] = await extract('My name is Dana Okafor.');
    expect(stated).toMatchObject({ subject: 'user', attribute: 'name', value: 'Dana Okafor' });
    expect(stated!.confidence).toBeGreaterThan(facts[0]!.confidence);
  });

  it('reads age, job, employer, where the user lives and contact details when stated', async () => {
    expect(
      await read(
        "I'm 34 years old.",
        'I work as a paramedic.',
        'I work at Providence Hospital.',
        'I live in Portland now.',
        'my email is maren@example.org',
        'I moved to Denver.',
      ),
    ).toEqual([
      'user age=34',
      'user job=paramedic',
      'user employer=Providence Hospital',
      'user lives_in=Portland',
      'user email=maren@example.org',
      'user lives_in=Denver',
    ]);
  });

  it('reads standing preferences and splits lists when the user asks for them always or politely', async () => {
    expect(
      await read(
        'pls always use metric units and no emoji, the little screen turns them into boxes',
        'please never use markdown',
        'please reply in German',
      ),
    ).toEqual([
      'user prefers=metric units',
      'user prefers=no emoji',
      'user prefers=no markdown',
      'user prefers=reply in German',
    ]);
    expect(await read('I prefer tea over coffee.', 'I never eat meat.', 'ok, avoid jargon')).toEqual([
      'user prefers=tea',
      'user prefers=never eat meat',
      'user prefers=no jargon',
    ]);
    expect(await read('use the map I sent', 'please write a haiku about rain')).toEqual([]);
  });

  it('reads likes and dislikes as separate values and "not anymore" as a negation', async () => {
    expect(
      await read(
        'I love hiking.',
        'I really like sourdough bread and jam.',
        "I can't stand cold coffee.",
        "I don't like olives.",
        "I don't like jazz anymore.",
      ),
    ).toEqual([
      'user likes=hiking',
      'user likes=sourdough bread',
      'user dislikes=cold coffee',
      'user dislikes=olives',
      'user likes=jazz (negate)',
    ]);
  });

  it('reads possessions, battery capacity and the end of a possession', async () => {
    expect(
      await read(
        'node runs on a 3000 mAh 18650 and I carry a 10000 mAh power bank',
        'also bought a spare 18650 for 12 dollars.',
        'I sold my old Baofeng.',
      ),
    ).toEqual([
      'user battery_capacity=3000 mAh',
      'user owns=a 10000 mAh power bank',
      'user owns=a spare 18650',
      'user owns=old Baofeng (negate)',
    ]);
    expect(await read('I have a question about antennas.', 'I have no idea.', 'I have to go.')).toEqual([]);
  });

  it('reads "my/our X is Y" for data-like values, a node id after "is" included, but not a reading of the node', async () => {
    expect(
      await read(
        'our cabin node is !c0ffee42, it sits on the porch roof',
        'my license renewal is due 2026-03-15, remind me if it comes up',
        'my node battery is at 40 %',
      ),
    ).toEqual(['user cabin_node=!c0ffee42', 'user license_renewal=due 2026-03-15']);
  });

  it('reads a change of "my X" as its new value: switched to, changed from … to, "is now", "my new X is"', async () => {
    expect(
      await read(
        'I switched my main relay to BEAR-CREEK on Bear Butte, id !77aa0012',
        'we moved off LARCH-RIDGE, my main relay is now BEAR-CREEK',
        'my new relay is BEAR-CREEK',
        'changed our repeater from !c0ffee42 to !d00d0001 last night',
      ),
    ).toEqual([
      'user main_relay=BEAR-CREEK',
      'user main_relay=BEAR-CREEK',
      'user main_relay=BEAR-CREEK',
      'user repeater=!d00d0001',
    ]);
    // An amount with a thousands separator is one value; "the X is Y now instead of Z" changes an X the user has.
    const budget = await extract(
      'Our monthly cloud budget is $1,200, finance reviews the invoice.',
      'Finance cut us back: the cloud budget is $2,250 a month now instead of $1,200.',
    );
    expect(budget.map((fact) => [fact.attribute, fact.value, fact.replaces ?? false])).toEqual([
      ['monthly_cloud_budget', '$1,200', false],
      ['monthly_cloud_budget', '$2,250 a month', true],
    ]);
    expect(await read('the weather is now 12 degrees instead of 9')).toEqual([]);
    // Not data, a passing state, or a figure of speech: nothing.
    expect(
      await read('I changed my mind to stay home', 'I moved my stuff to the garage', 'my relay is now down again'),
    ).toEqual([]);
  });

  it('reads people by relation and resolves his and her to the person named before', async () => {
    expect(
      await read(
        'my buddy Tomas is coming along. his node is !7be104c2, he has no license yet',
        'my partner Ines watches from home, her node is !e20d4f19.',
      ),
    ).toEqual(['user buddy=Tomas', 'Tomas node_id=!7be104c2', 'user partner=Ines', 'Ines node_id=!e20d4f19']);
    expect(await read("we went to my daughter Ana's recital")).toEqual(['user daughter=Ana']);
  });

  it('makes a named person the subject when the fact is about them', async () => {
    expect(await read('Tomas lives in Bend.', 'my sister Ana works at Intel. She lives in Hillsboro.')).toEqual([
      'Tomas lives_in=Bend',
      'user sister=Ana',
      'Ana employer=Intel',
      'Ana lives_in=Hillsboro',
    ]);
    // Pronouns resolve within one message only: a later message's "she" may be anyone.
    expect(await read('my sister Ana works at Intel.', 'She lives in Hillsboro.')).toEqual([
      'user sister=Ana',
      'Ana employer=Intel',
    ]);
  });

  it('resolves "my sister" to the one sister the stored facts name', async () => {
    const known = [{ subject: 'user', attribute: 'sister', value: 'Ana', validTo: undefined } as unknown as Fact];
    const facts = await extractor.extract({
      messages: userMessages('my sister lives in Salem now.'),
      knownFacts: known,
    });
    expect(facts.map((fact) => `${fact.subject} ${fact.attribute}=${fact.value}`)).toEqual(['Ana lives_in=Salem']);
    expect(await read('my sister lives in Salem now.')).toEqual([]);
  });

  it('reads plans and trip dates, and a moved date as the new value when a correction names it', async () => {
    const facts = await extract(
      'planning the Timberline Trail loop around Mt Hood, starting June 14. about 65 km, 4 days',
      'change of plans: the permit came through for June 21, not the 14th. same route',
    );
    expect(facts.map((fact) => [fact.attribute, fact.value, fact.sourceSeqs[0]])).toEqual([
      ['plans', 'the Timberline Trail loop around Mt Hood', 1],
      ['trip_date', 'June 14', 1],
      ['trip_date', 'June 21', 2],
    ]);
    expect(await read('I moved the trip to 28 June, not June 21.')).toEqual(['user trip_date=28 June']);
    expect(await read('my birthday is March 3.', 'our wedding is on 12 September.')).toEqual([
      'user birthday=March 3',
      'user wedding_date=12 September',
    ]);
  });

  it('uses the known facts when a bare correction moves a date without naming the trip', async () => {
    const known = [
      { subject: 'user', attribute: 'trip_date', value: 'June 14', validTo: undefined } as unknown as Fact,
    ];
    const messages = userMessages('actually it moved to June 21');
    expect((await extractor.extract({ messages, knownFacts: known })).map((fact) => fact.value)).toEqual(['June 21']);
    expect(await extractor.extract({ messages, knownFacts: [] })).toEqual([]);
  });

  it('keeps the language of the sentence when the user writes German, Spanish or French', async () => {
    const facts = await extract(
      'Ich heiße Jonas und ich wohne in München.',
      'Me llamo Lucía. Vivo en Sevilla y me gusta el café.',
      "Je m'appelle Chloé, j'habite à Lyon. J'aime le vélo.",
      'Ich mag Pilze nicht.',
    );
    expect(facts.map((fact) => `${fact.attribute}=${fact.value}`)).toEqual([
      'name=Jonas',
      'lives_in=München',
      'name=Lucía',
      'lives_in=Sevilla',
      'likes=el café',
      'name=Chloé',
      'lives_in=Lyon',
      'likes=le vélo',
      'dislikes=Pilze',
    ]);
    expect(facts[1]!.text).toBe('Ich heiße Jonas und ich wohne in München.');
    expect(facts[4]!.text).toBe('Vivo en Sevilla y me gusta el café.');
  });

  it('extracts nothing when the user asks, supposes, quotes someone or says how they are', async () => {
    const statements = [
      "what's my relay?",
      'is my node !a3f9c2d1',
      'where do I live again',
      'If I lived in Paris I would love croissants.',
      'Maybe I like jazz.',
      'I would like a coffee.',
      "I'm fine, thanks.",
      "I'm ok.",
      "i'm here",
      "I'm Back!",
      'Tomas said I live in Bend.',
      'She wrote "my name is Alice" on the card.',
      'I love it!',
      'I love you bot',
      "ok battery's at 40% so signing off, good night",
      'my battery is at 40%',
      'tested the new whip at Mirror Lake: SNR -6.25 dB, RSSI -104 dBm to LARCH-RIDGE',
      "I'm going to grab coffee",
      "I'm gonna keep trying.",
      'last year I went on a hike on June 3',
      'Have a great hike!',
      'I got some great news today.',
      "Her name's Coco.",
      'Good boots help avoid blisters.',
      'I lost my job last month.',
      'I always feel calm by the sea.',
      'I think I am a decent cook now.',
      "Rex is my mother's dog.",
      'My girlfriend, Ana and I went out.',
    ];
    expect(await read(...statements)).toEqual([]);
  });

  it('reads only user messages, never the assistant', async () => {
    const messages: SummarySourceMessage[] = [
      {
        seq: 1,
        role: 'assistant',
        content: 'My name is Bot and I live in the cloud.',
        createdAt: '2025-05-29T02:40:00.000Z',
      },
      { seq: 2, role: 'user', content: 'I live in Bend.', createdAt: '2025-05-29T02:41:00.000Z' },
    ];
    expect(
      (await extractor.extract({ messages, knownFacts: [] })).map(
        (fact) => `${fact.attribute}=${fact.value}@${fact.sourceSeqs[0]}`,
      ),
    ).toEqual(['lives_in=Bend@2']);
  });

  it('returns the same facts when run twice on the same messages', async () => {
    const contents = ["I'm Maren, callsign N0CALL.", 'I love hiking and my buddy Tomas lives in Bend.'];
    expect(await extract(...contents)).toEqual(await extract(...contents));
  });

  it('counts a fact once when two patterns read it from one message', async () => {
    const facts = await extract('my callsign is N0CALL, callsign N0CALL');
    expect(facts.filter((fact) => fact.attribute === 'callsign')).toHaveLength(1);
  });

  it('stops when its signal is aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(
      extractor.extract({ messages: userMessages('I live in Bend.'), knownFacts: [], signal: controller.signal }),
    ).rejects.toThrow();
  });
});
