import type { Random } from './create-random.js';
import { createRelay, dateInDays, type MeshPersona } from './mesh-chat-persona.js';

/** What an exchange may read: the seeded source, the user so far, and the time of the user's message. */
export interface ExchangeContext {
  readonly random: Random;
  readonly persona: MeshPersona;
  readonly now: Date;
}

/** One user message and the bot's reply; it may update the persona (a fact stated or changed). */
export type Exchange = (context: ExchangeContext) => readonly [user: string, assistant: string];

const months = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];
const weekdays = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];

function formatDate(date: Date): string {
  return `${date.getUTCDate()} ${months[date.getUTCMonth()]}`;
}

function formatClock(hours: number, minutes: number): string {
  return `${String(hours).padStart(2, '0')}:${String(minutes).padStart(2, '0')}`;
}

function budgetLeft(persona: MeshPersona): number {
  return persona.budget - persona.spent;
}

/** The exchanges that open every chat, in order: the user states the facts a memory should keep. */
export const introExchanges: readonly Exchange[] = [
  ({ random, persona }) => [
    random.pick([
      'hey bot, you there?',
      'test test, anyone copy?',
      'hi, first time messaging the bot',
      `radio check from ${persona.homeTown}`,
    ]),
    random.pick([
      'Loud and clear. How can I help?',
      'Copy you fine. What do you need?',
      'Hello! Reading you well. What can I do for you?',
    ]),
  ],
  ({ persona: p }) => [
    `I'm ${p.name}, callsign ${p.callsign}. node is ${p.nodeId}, a ${p.device.name}. home is ${p.homeTown}`,
    `Nice to meet you, ${p.name} (${p.callsign}). Noted: node ${p.nodeId}, ${p.device.name}, home ${p.homeTown}.`,
  ],
  ({ random }) => [
    random.pick([
      'pls use metric and no emoji, my screen cannot show them',
      'metric units only please, and no emoji',
      'no emoji pls, and keep it metric',
    ]),
    'Understood: metric units, no emoji.',
  ],
  ({ persona: { trip } }) => [
    `planning the ${trip.route.name}, starting ${formatDate(trip.startDate)}. about ${trip.route.lengthKm} km, ${trip.route.days} days`,
    `${trip.route.name} from ${formatDate(trip.startDate)}: about ${trip.route.lengthKm} km in ${trip.route.days} days, ` +
      `${Math.round(trip.route.lengthKm / trip.route.days)} km a day. Want a gear check?`,
  ],
  ({ persona: p }) => {
    const longest = p.batteryMilliampHours / p.device.drawMinMilliamps / 24;
    const shortest = p.batteryMilliampHours / p.device.drawMaxMilliamps / 24;
    return [
      `node runs on a ${p.batteryMilliampHours} mAh 18650 and I carry a ${p.powerBankMilliampHours} mAh power bank`,
      `A ${p.device.name} averages ${p.device.drawMinMilliamps}-${p.device.drawMaxMilliamps} mA with GPS off, so ` +
        `${p.batteryMilliampHours} mAh lasts ${shortest.toFixed(1)}-${longest.toFixed(1)} days. The bank covers the rest.`,
    ];
  },
  ({ persona: { relay } }) => [
    `my main relay is a solar node called ${relay.name} on ${relay.site}, id ${relay.nodeId}`,
    `Noted: relay ${relay.name} (${relay.nodeId}) on ${relay.site}.`,
  ],
  ({ persona: p }) => [
    `gear budget for radio stuff is ${p.budget} ${p.region.currency}`,
    `Noted: ${p.budget} ${p.region.currency} budget, nothing spent yet.`,
  ],
  ({ persona: p }) => [
    `${p.buddy.name} is joining the trip, node ${p.buddy.nodeId}`,
    `Noted: ${p.buddy.name} (${p.buddy.nodeId}) joins. Set up a private channel with a random PSK and share its QR code before you go.`,
  ],
];

/** The greeting a user sends when coming back after a break. */
export const greetingExchange: Exchange = ({ random, persona, now }) => {
  const hour = (now.getUTCHours() + persona.region.utcOffsetHours + 24) % 24;
  const greeting = hour < 11 ? 'morning' : hour < 18 ? 'hi again' : 'evening';
  return [
    random.pick([`${greeting}!`, `${greeting} bot`, `${greeting}, you still there?`, `${greeting}, radio check`]),
    random.pick([
      `${greeting[0]!.toUpperCase()}${greeting.slice(1)}, ${persona.name}. What's up?`,
      `Reading you fine, ${persona.name}. How can I help?`,
    ]),
  ];
};

/** Plans the next trip once the current one is over: the old trip date stops being true. */
export const newTripExchange: Exchange = ({ random, persona, now }) => {
  const finished = persona.trip.route;
  const route = random.pick(persona.region.routes.filter((candidate) => candidate !== finished));
  persona.trip = { route, startDate: dateInDays(now, random.integer(7, 30)), previousStartDate: undefined };
  const date = formatDate(persona.trip.startDate);
  return [
    `back from the ${finished.name}! next up: ${route.name} from ${date}`,
    `Welcome back. Logged the next trip: ${route.name} from ${date}, about ${route.lengthKm} km in ${route.days} days.`,
  ];
};

const weather: Exchange = ({ random, persona, now }) => {
  const place = random.pick(persona.region.places);
  const day = dateInDays(now, random.integer(1, 3));
  const low = random.integer(-6, 8);
  const high = low + random.integer(5, 14);
  const wind = random.integer(5, 40);
  const sky = random.pick([
    'dry',
    'showers after 14:00',
    'fog until 10:00',
    'snow above 2,000 m',
    'storms likely after 15:00',
    'clear',
  ]);
  const direction = random.pick(['N', 'NW', 'W', 'SW', 'S', 'E']);
  return [
    `weather for ${place} ${random.pick(['tomorrow', 'this weekend', 'in the next days'])}?`,
    `${weekdays[day.getUTCDay()]} ${formatDate(day)}: high ${high} C, low ${low} C, ${direction} wind ${wind}-${wind + random.integer(5, 20)} km/h, ${sky}.`,
  ];
};

function signalVerdict(snrDb: number): string {
  if (snrDb > 0) return 'Strong link, any preset works.';
  if (snrDb > -7) return 'Solid margin on LongFast.';
  if (snrDb > -13) return 'Workable, expect some drops.';
  return 'Near the LongFast limit of -17.5 dB; try higher ground.';
}

const signalReport: Exchange = ({ random, persona }) => {
  const snrDb = random.integer(-76, 32) / 4;
  // Below the noise floor RSSI and SNR fall together; clamp to what a LoRa receiver can report.
  const rssiDbm = Math.min(-70, Math.max(-130, Math.round(-100 + snrDb * 1.5 + random.integer(-6, 6))));
  const place = random.pick(persona.region.places);
  const previous = persona.lastSignal;
  persona.lastSignal = { snrDb, rssiDbm, place, relayName: persona.relay.name };
  const comparison = previous === undefined ? '' : ` Last time ${previous.snrDb} dB from ${previous.place}.`;
  return [
    `signal from ${place}: SNR ${snrDb} dB, RSSI ${rssiDbm} dBm via ${persona.relay.name}`,
    `Logged SNR ${snrDb} dB, RSSI ${rssiDbm} dBm.${comparison} ${signalVerdict(snrDb)}`,
  ];
};

const positionReport: Exchange = ({ random, persona }) => {
  const [place, camp] = [random.pick(persona.region.places), random.pick(persona.region.places)];
  const kilometres = random.integer(6, 24);
  return [
    `at ${place}, ${kilometres} km done today, camping at ${camp}`,
    `Logged ${kilometres} km, now at ${place}, camp at ${camp}. I'll pass it on if anyone asks for you.`,
  ];
};

// Open-circuit voltage of a Li-ion 18650 at rest, against charge left: the usual lookup.
const voltageCurve: readonly (readonly [volts: number, percent: number])[] = [
  [4.2, 100],
  [4.1, 90],
  [4.0, 80],
  [3.9, 70],
  [3.85, 60],
  [3.8, 55],
  [3.75, 50],
  [3.7, 40],
  [3.65, 30],
  [3.6, 20],
  [3.5, 10],
  [3.3, 0],
];

const batteryVoltage: Exchange = ({ random, persona }) => {
  const volts = random.integer(352, 419) / 100;
  const percent = voltageCurve.find(([threshold]) => volts >= threshold)?.[1] ?? 5;
  const advice = percent < 30 ? 'Charge it from the bank tonight.' : 'Fine for now.';
  return [
    `node reads ${volts.toFixed(2)} V, what % is that?`,
    `${volts.toFixed(2)} V is about ${percent}% on an 18650 at rest. ${advice} Your bank holds ${persona.powerBankMilliampHours} mAh.`,
  ];
};

const gpsBattery: Exchange = ({ random, persona: p }) => {
  const minutes = random.pick([2, 5, 10, 15, 30]);
  const extra = Math.max(1, Math.round(30 / minutes) * 2);
  const days = p.batteryMilliampHours / (p.device.drawMaxMilliamps + extra) / 24;
  return [
    `if I set GPS to every ${minutes} min how long does the ${p.batteryMilliampHours} mAh cell last?`,
    `A fix every ${minutes} min adds about ${extra} mA, so plan on ${days.toFixed(1)} days per cell on the ${p.device.name}.`,
  ];
};

const gearItems: readonly (readonly [item: string, minPrice: number, maxPrice: number])[] = [
  ['a spare 18650', 8, 15],
  ['a half-wave whip', 20, 40],
  ['a 5 W solar panel', 25, 45],
  ['5 m of LMR-240 coax', 15, 30],
  ['an IP67 case', 12, 25],
  ['a 5.8 dBi omni', 55, 85],
];

const purchase: Exchange = ({ random, persona: p }) => {
  const [item, minPrice, maxPrice] = random.pick(gearItems);
  const price = random.integer(minPrice, maxPrice);
  const before = p.spent;
  p.spent += price;
  const left = budgetLeft(p);
  const verdict =
    left >= 0
      ? `${left} ${p.region.currency} left of ${p.budget}.`
      : `that is ${-left} ${p.region.currency} over your ${p.budget} budget.`;
  return [
    `bought ${item} for ${price} ${p.region.currency}. budget left?`,
    `${before} + ${price} = ${p.spent} spent, ${verdict}`,
  ];
};

const recallRelay: Exchange = ({ random, persona: { relay } }) => [
  random.pick(["what was that relay's name again?", 'which relay did I say I use?', 'remind me the relay node id']),
  `${relay.name} (${relay.nodeId}) on ${relay.site}.`,
];

const recallTrip: Exchange = ({ random, persona: { trip } }) => [
  random.pick([
    'when do we start again? I keep mixing it up',
    "what's my trip date again?",
    'remind me when the trip starts',
  ]),
  `${formatDate(trip.startDate)}, on the ${trip.route.name}` +
    (trip.previousStartDate === undefined ? '.' : `. It moved from ${formatDate(trip.previousStartDate)}.`),
];

const recallBudget: Exchange = ({ persona: p }) => [
  'how much gear budget do I have left?',
  `${budgetLeft(p)} ${p.region.currency} left of ${p.budget} ${p.region.currency}, ${p.spent} spent so far.`,
];

const recallSignal: Exchange = ({ persona: { lastSignal } }) => [
  'what SNR did I get last time?',
  lastSignal === undefined
    ? 'No signal report logged yet. Send SNR and RSSI from your next stop.'
    : `SNR ${lastSignal.snrDb} dB, RSSI ${lastSignal.rssiDbm} dBm from ${lastSignal.place} via ${lastSignal.relayName}.`,
];

const recallIdentity: Exchange = ({ random, persona: p }) =>
  random.chance(0.5)
    ? [`what's ${p.buddy.name}'s node id again?`, `${p.buddy.name} is ${p.buddy.nodeId}.`]
    : [
        'what callsign and node did I give you?',
        `${p.callsign}, node ${p.nodeId} (${p.device.name}), home ${p.homeTown}.`,
      ];

const moveTrip: Exchange = ({ random, persona: { trip }, now }) => {
  const old = trip.startDate;
  let moved = dateInDays(old, random.pick([-7, -5, -3, 3, 5, 7, 10]));
  if (moved <= now) moved = dateInDays(now, 5);
  trip.previousStartDate = old;
  trip.startDate = moved;
  return [
    `change of plans: the ${trip.route.name} now starts ${formatDate(moved)}, not ${formatDate(old)}`,
    `Updated: ${trip.route.name} now starts ${formatDate(moved)} (was ${formatDate(old)}).`,
  ];
};

const replaceRelay: Exchange = ({ random, persona: p }) => {
  const old = p.relay;
  p.relay = createRelay(random, p.region, old.name);
  return [
    `${old.name} is offline, using ${p.relay.name} on ${p.relay.site} now, id ${p.relay.nodeId}`,
    `Updated: relay is now ${p.relay.name} (${p.relay.nodeId}) on ${p.relay.site}. ${old.name} marked offline.`,
  ];
};

const raiseBudget: Exchange = ({ random, persona: p }) => {
  p.budget += random.pick([20, 30, 50]);
  return [
    `raised my radio budget to ${p.budget} ${p.region.currency}`,
    `Updated: budget ${p.budget} ${p.region.currency}, ${p.spent} spent, ${budgetLeft(p)} left.`,
  ];
};

const forwardMessage: Exchange = ({ random, persona: p }) => {
  const place = random.pick(p.region.places);
  const eta = formatClock(random.integer(12, 20), random.pick([0, 15, 30, 45]));
  return [
    `tell ${p.buddy.name} I'm at ${place}, ETA camp ${eta}`,
    `Queued DM to ${p.buddy.nodeId}: "${p.name} at ${place}, ETA camp ${eta}". I'll confirm when it is acked.`,
  ];
};

const channelLoad: Exchange = ({ random }) => {
  const utilization = random.integer(3, 45);
  const airtime = random.integer(1, 12);
  const verdict =
    utilization > 25 ? 'busy; the firmware starts delaying your packets near 25%.' : 'fine, lots of room.';
  return [
    `ChUtil shows ${utilization}% and air util TX ${airtime}%, is that bad?`,
    `ChUtil ${utilization}% is ${verdict} TX ${airtime}% is yours; keep it under 10%.`,
  ];
};

const hopLimit: Exchange = ({ random, persona: p }) => {
  const hops = random.integer(2, 5);
  return [
    `is hop limit ${hops} enough to reach ${p.relay.name} from the trail?`,
    hops >= 3
      ? `${hops} is plenty: you are usually 1-2 hops from ${p.relay.name}. Higher only adds airtime.`
      : `${hops} is tight from the far side; set 3 for the trip.`,
  ];
};

const regionSetting: Exchange = ({ persona: { region } }) => [
  'which region setting do I need again?',
  `Region ${region.loraRegion} (${region.band}), modem preset LongFast unless your local mesh agreed on another.`,
];

// Day length at about 45 degrees latitude swings 3.6 h either side of 12 h over the year (peak 21 June);
// solar noon near 13:15 local summer time, 12:15 in winter. Close enough for a chat, and the same date gives the same answer.
function daylight(date: Date, southern: boolean): { rise: string; set: string; hours: number } {
  const dayOfYear = (date.getTime() - Date.UTC(date.getUTCFullYear(), 0, 1)) / 86_400_000;
  const swing = 3.6 * Math.cos((2 * Math.PI * (dayOfYear - 172)) / 365);
  const hours = 12 + (southern ? -swing : swing);
  const toClock = (time: number) => formatClock(Math.floor(time), Math.floor((time % 1) * 60));
  const noon = hours > 12 ? 13.25 : 12.25;
  return { rise: toClock(noon - hours / 2), set: toClock(noon + hours / 2), hours };
}

const sunrise: Exchange = ({ random, persona }) => {
  const place = random.pick(persona.region.places);
  const { rise, set, hours } = daylight(persona.trip.startDate, persona.region.loraRegion === 'ANZ');
  return [
    `sunrise at ${place} on ${formatDate(persona.trip.startDate)}?`,
    `About ${rise} local, sunset about ${set}. ${hours.toFixed(1)} h of daylight.`,
  ];
};

const water: Exchange = ({ random, persona }) => {
  const [from, to] = [random.pick(persona.region.places), random.pick(persona.region.places)];
  return [
    `next reliable water after ${from}?`,
    `${to}, about ${random.integer(2, 9)} km on. Treat it and carry 1.5 L to be safe.`,
  ];
};

const smallTalkPairs: readonly (readonly [string, string])[] = [
  ['lol thanks', 'Anytime.'],
  ["how's your day going?", 'Busy relaying packets, thanks for asking.'],
  ['ok brb, grabbing coffee', "Enjoy, I'll be here."],
  ['nice', 'Glad it helps.'],
  ['you are a lifesaver', 'Happy to help. Stay safe out there.'],
  ['battery at 40%, signing off for tonight', 'Good night. 73.'],
  ['sorry for the typos, gloves on', 'No problem, reading you fine.'],
];

const smallTalk: Exchange = ({ random }) => random.pick(smallTalkPairs);

/** The topics after the intro, with relative weights: questions, reports, recalls and fact changes. */
export const topicExchanges: readonly (readonly [exchange: Exchange, weight: number])[] = [
  [weather, 8],
  [signalReport, 9],
  [positionReport, 6],
  [batteryVoltage, 5],
  [gpsBattery, 4],
  [purchase, 4],
  [recallRelay, 3],
  [recallTrip, 3],
  [recallBudget, 2],
  [recallSignal, 3],
  [recallIdentity, 2],
  [moveTrip, 1],
  [replaceRelay, 1],
  [raiseBudget, 1],
  [forwardMessage, 5],
  [channelLoad, 3],
  [hopLimit, 2],
  [regionSetting, 1],
  [sunrise, 3],
  [water, 4],
  [smallTalk, 8],
];
