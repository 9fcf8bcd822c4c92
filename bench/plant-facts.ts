import type { MessageInput } from '@mnemo/core';

/** A concrete fact a user states once; it survives while `value` is an exact substring of the context. */
export interface PlantedFact {
  /** What kind of fact, for the tables: `name`, `callsign`, … */
  readonly kind: string;
  /** The user's message that states it (≤ 150 characters, as on the radio). */
  readonly statement: string;
  /** The exact text that must still be in the context. */
  readonly value: string;
  /** 1-based user turn of the final chat where the statement is planted. */
  readonly turn: number;
  /** What the user asks about it at the end of the chat, in other words than the statement where natural. */
  readonly question: string;
}

/**
 * Ten facts of the kinds the issue lists, stated the way a mesh user would, about things the generated
 * persona never mentions (a mentor, a cabin node, …), so that no generated message can carry them.
 * Planted in the first 30 turns, spread between the generator's own introduction.
 */
export const plantedFacts: readonly PlantedFact[] = Object.freeze([
  {
    kind: 'name',
    statement: 'btw my radio mentor is Ilse Varga, she taught me everything about antennas',
    value: 'Ilse Varga',
    turn: 3,
    question: 'who was my radio mentor again?',
  },
  {
    kind: 'callsign',
    statement: "Ilse's callsign is KE7QTR if you ever hear her on the repeater",
    value: 'KE7QTR',
    turn: 5,
    question: "what is Ilse's callsign?",
  },
  {
    kind: 'node id',
    statement: 'our cabin node is !c0ffee42, it sits on the porch roof',
    value: '!c0ffee42',
    turn: 8,
    question: 'what is the id of the cabin node?',
  },
  {
    kind: 'date',
    statement: 'the club field day is on 12 July this year',
    value: '12 July',
    turn: 11,
    question: 'when is the club field day?',
  },
  {
    kind: 'date',
    statement: 'my license renewal is due 2026-03-15, remind me if it comes up',
    value: '2026-03-15',
    turn: 14,
    question: 'when is my license renewal due?',
  },
  {
    kind: 'money',
    statement: 'the cabin solar kit cost me $349.90 in total',
    value: '$349.90',
    turn: 17,
    question: 'how much did the cabin solar kit cost?',
  },
  {
    kind: 'battery capacity',
    statement: 'the cabin node runs on a 7800 mAh LiFePO4 pack',
    value: '7800 mAh',
    turn: 20,
    question: 'what capacity is the battery pack of the cabin node?',
  },
  {
    kind: 'relay',
    statement: 'the cabin reaches the mesh through a relay called OWL-HOLLOW',
    value: 'OWL-HOLLOW',
    turn: 23,
    question: 'which relay does the cabin reach the mesh through?',
  },
  {
    kind: 'preference',
    statement: 'I prefer checking in by text, never by voice',
    value: 'never by voice',
    turn: 26,
    question: 'how do I like to check in?',
  },
  {
    kind: 'appointment',
    statement: 'vet appointment for my dog Pixel on Thursday at 09:50',
    value: '09:50',
    turn: 29,
    question: 'what time is the vet appointment for Pixel?',
  },
]);

/**
 * A second, different set, held out from tuning (decision 0022): other kinds of facts (family, health,
 * codes, a frequency, a grid square, a birthday, a flight, a plate, a routine), other turns (2 to 34,
 * several in a row), said in other shapes (no "my … is" in half of them), planted into a chat of
 * another generator seed ({@link heldOutMeshSeed}). Constants of the summarizer and of compaction are
 * chosen on {@link plantedFacts}; this set only reports.
 */
export const heldOutFacts: readonly PlantedFact[] = Object.freeze([
  {
    kind: 'family',
    statement: 'my sister Marta Kowalczyk moved to Dunedin last year',
    value: 'Marta Kowalczyk',
    turn: 2,
    question: "what is my sister's name?",
  },
  {
    kind: 'allergy',
    statement: "I'm allergic to penicillin, good to know if I ever get hurt out there",
    value: 'penicillin',
    turn: 4,
    question: 'what am I allergic to?',
  },
  {
    kind: 'frequency',
    statement: 'the club net runs on 146.520 MHz every Sunday evening',
    value: '146.520 MHz',
    turn: 5,
    question: 'which frequency does the club net use?',
  },
  {
    kind: 'code',
    statement: 'gate code at the trailhead hut is 4471, keep it to yourself',
    value: '4471',
    turn: 9,
    question: 'what was the gate code at the hut?',
  },
  {
    kind: 'grid square',
    statement: 'home grid square RF80lm, for the contest log',
    value: 'RF80lm',
    turn: 13,
    question: 'what is my grid square?',
  },
  {
    kind: 'birthday',
    statement: 'my birthday is 3 November, no fuss please',
    value: '3 November',
    turn: 16,
    question: 'when is my birthday?',
  },
  {
    kind: 'flight',
    statement: 'flying back from Auckland on NZ615 after the trip',
    value: 'NZ615',
    turn: 21,
    question: 'which flight am I taking back?',
  },
  {
    kind: 'vehicle',
    statement: 'I drive a green Subaru, plate KDX412, parked at the road end',
    value: 'KDX412',
    turn: 22,
    question: 'what is the plate of my car?',
  },
  {
    kind: 'routine',
    statement: 'I take my thyroid pill at 07:15 every morning',
    value: '07:15',
    turn: 30,
    question: 'when do I take my pill?',
  },
  {
    kind: 'favourite',
    statement: "my favourite trail snack is Whittaker's peanut slab",
    value: 'peanut slab',
    turn: 34,
    question: 'what is my favourite trail snack?',
  },
]);

/** Generator seed of the chat {@link heldOutFacts} are planted into (the tuning set uses 7). */
export const heldOutMeshSeed = 11;

/** The bot's reply to a planted statement: an acknowledgement that does not repeat the value, so only the user's words carry it. */
export const plantedReply = 'Noted, I will keep that in mind.';

/**
 * Inserts each fact's statement, with {@link plantedReply}, as the user turn `fact.turn` of a chat that
 * alternates user/assistant from the user; times fall 20 and 40 seconds after the previous message (the
 * generator leaves at least a minute between exchanges), so they stay strictly increasing. Throws a
 * `RangeError` when a value already occurs in the chat, since survival could not then be told apart.
 */
export function plantFacts(chat: readonly MessageInput[], facts: readonly PlantedFact[]): MessageInput[] {
  for (const fact of facts) {
    const carrier = chat.find((message) => message.content.includes(fact.value));
    if (carrier !== undefined)
      throw new RangeError(
        `planted value ${JSON.stringify(fact.value)} already occurs in the chat: ${JSON.stringify(carrier.content)}`,
      );
  }
  const byTurn = new Map(facts.map((fact) => [fact.turn, fact]));
  const result: MessageInput[] = [];
  let turn = 0;
  const plantDue = () => {
    for (let fact = byTurn.get(turn + 1); fact !== undefined; fact = byTurn.get(turn + 1)) {
      // Before the first message, a minute earlier than it; otherwise just after the previous message.
      const last = result[result.length - 1]?.createdAt;
      const previous =
        last === undefined ? Date.parse(chat[0]?.createdAt ?? new Date(0).toISOString()) - 60_000 : Date.parse(last);
      result.push({ role: 'user', content: fact.statement, createdAt: new Date(previous + 20_000).toISOString() });
      result.push({ role: 'assistant', content: plantedReply, createdAt: new Date(previous + 40_000).toISOString() });
      turn += 1;
    }
  };
  for (const message of chat) {
    if (message.role === 'user') {
      plantDue();
      turn += 1;
    }
    result.push(message);
  }
  plantDue();
  return result;
}
