import type { Random } from './create-random.js';

/** A hiking area: the LoRa region setting its radios use and the names a chat there mentions. */
export interface MeshRegion {
  /** The Meshtastic `region` setting, e.g. `US`. */
  readonly loraRegion: string;
  readonly band: string;
  readonly currency: string;
  /** Offset of local summer time from UTC, in hours (messages are stamped in UTC). */
  readonly utcOffsetHours: number;
  readonly towns: readonly string[];
  readonly places: readonly string[];
  readonly relaySites: readonly string[];
  readonly routes: readonly MeshRoute[];
  readonly callsignPrefixes: readonly string[];
}

/** A multi-day route, with its length in km. */
export interface MeshRoute {
  readonly name: string;
  readonly lengthKm: number;
  readonly days: number;
}

/** A radio board and its average current draw with GPS off, in mA. */
export interface MeshDevice {
  readonly name: string;
  readonly drawMinMilliamps: number;
  readonly drawMaxMilliamps: number;
}

/** A relay node the user's messages hop through. */
export interface MeshRelay {
  readonly name: string;
  readonly nodeId: string;
  readonly site: string;
}

/** A planned trip; `startDate` is a UTC midnight, `previousStartDate` set once the date was moved. */
export interface MeshTrip {
  route: MeshRoute;
  startDate: Date;
  previousStartDate: Date | undefined;
}

/** A signal report the user sent: SNR in dB, RSSI in dBm. */
export interface MeshSignal {
  readonly snrDb: number;
  readonly rssiDbm: number;
  readonly place: string;
  readonly relayName: string;
}

/** Everything the generated user has said about themselves so far; exchanges read it and update it. */
export interface MeshPersona {
  readonly name: string;
  readonly callsign: string;
  readonly nodeId: string;
  readonly homeTown: string;
  readonly region: MeshRegion;
  readonly device: MeshDevice;
  readonly batteryMilliampHours: number;
  readonly powerBankMilliampHours: number;
  readonly buddy: { readonly name: string; readonly nodeId: string };
  budget: number;
  spent: number;
  relay: MeshRelay;
  trip: MeshTrip;
  lastSignal: MeshSignal | undefined;
}

const regions: readonly MeshRegion[] = [
  {
    loraRegion: 'US',
    band: '902-928 MHz',
    currency: 'USD',
    utcOffsetHours: -7,
    towns: ['Hood River', 'Bend', 'Leavenworth', 'Sisters', 'Government Camp'],
    places: [
      'Mirror Lake',
      'Cloud Cap',
      'Ramona Falls',
      'Elk Cove',
      'Paradise Park',
      'Timberline Lodge',
      'Zigzag Canyon',
      'Cairn Basin',
      'Newton Creek',
      'Bald Mountain',
    ],
    relaySites: ['Larch Mountain', 'Hood River Mountain', 'Mount Defiance', 'Tom Dick Peak', 'Lookout Mountain'],
    routes: [
      { name: 'Timberline Trail', lengthKm: 65, days: 4 },
      { name: 'Three Sisters Loop', lengthKm: 80, days: 5 },
      { name: 'Enchantments traverse', lengthKm: 31, days: 2 },
    ],
    callsignPrefixes: ['K', 'N', 'W', 'KD', 'KJ'],
  },
  {
    loraRegion: 'EU_868',
    band: '863-870 MHz',
    currency: 'GBP',
    utcOffsetHours: 1,
    towns: ['Aviemore', 'Braemar', 'Kingussie', 'Nethy Bridge', 'Glenmore'],
    places: [
      'Loch Avon',
      'Cairn Gorm summit',
      'Ryvoan bothy',
      'Lairig Ghru',
      'Corrour bothy',
      'Derry Lodge',
      'Loch Etchachan',
      'Shelter Stone',
      'Ben Macdui',
      'Glen Feshie',
    ],
    relaySites: ['Meall a Bhuachaille', 'Creag Bheag', 'Craigellachie', 'Morrone', 'Carn Daimh'],
    routes: [
      { name: 'Cairngorm 4000s', lengthKm: 32, days: 2 },
      { name: 'Lairig Ghru traverse', lengthKm: 45, days: 2 },
      { name: 'Speyside Way', lengthKm: 137, days: 7 },
    ],
    callsignPrefixes: ['MM7', 'GM4', '2M0', 'MM0', 'GM7'],
  },
  {
    loraRegion: 'EU_868',
    band: '863-870 MHz',
    currency: 'EUR',
    utcOffsetHours: 2,
    towns: ['Chamonix', 'Les Houches', 'Argentiere', 'Courmayeur', 'Les Contamines'],
    places: [
      'Lac Blanc',
      'Col de la Seigne',
      'Refuge Bonatti',
      'Col du Bonhomme',
      'Grand Col Ferret',
      'La Flegere',
      'Champex',
      'Refuge de Miage',
      'Trient',
      'Col de Balme',
    ],
    relaySites: ['Le Brevent', 'Aiguillette des Posettes', 'Mont Chetif', 'Tete de Balme', 'Le Prarion'],
    routes: [
      { name: 'Tour du Mont Blanc', lengthKm: 170, days: 10 },
      { name: 'Aiguilles Rouges traverse', lengthKm: 28, days: 2 },
      { name: 'Tour des Dents Blanches', lengthKm: 52, days: 4 },
    ],
    callsignPrefixes: ['F4', 'F5', 'F8', 'IX1', 'HB9'],
  },
  {
    loraRegion: 'ANZ',
    band: '915-928 MHz',
    currency: 'NZD',
    utcOffsetHours: 12,
    towns: ['National Park', 'Ohakune', 'Turangi', 'Whakapapa', 'Taupo'],
    places: [
      'Mangatepopo Hut',
      'Red Crater',
      'Emerald Lakes',
      'Oturere Hut',
      'Waihohonu Hut',
      'Tama Lakes',
      'Ketetahi',
      'South Crater',
      'Taranaki Falls',
      'Blue Lake',
    ],
    relaySites: ['Mount Pihanga', 'Hauhungatahi', 'Mount Ruapehu Top Station', 'Tongariro Summit', 'Kakaramea'],
    routes: [
      { name: 'Tongariro Northern Circuit', lengthKm: 43, days: 3 },
      { name: 'Round the Mountain track', lengthKm: 66, days: 5 },
      { name: 'Tongariro Crossing', lengthKm: 19, days: 1 },
    ],
    callsignPrefixes: ['ZL1', 'ZL2', 'ZL3', 'ZL4'],
  },
];

const devices: readonly MeshDevice[] = [
  { name: 'RAK4631', drawMinMilliamps: 15, drawMaxMilliamps: 25 },
  { name: 'T-Beam', drawMinMilliamps: 60, drawMaxMilliamps: 90 },
  { name: 'Heltec V3', drawMinMilliamps: 50, drawMaxMilliamps: 80 },
  { name: 'T-Echo', drawMinMilliamps: 10, drawMaxMilliamps: 18 },
  { name: 'Station G2', drawMinMilliamps: 70, drawMaxMilliamps: 110 },
];

const firstNames = [
  'Maren',
  'Tomas',
  'Ines',
  'Priya',
  'Jonas',
  'Aiko',
  'Callum',
  'Zofia',
  'Dario',
  'Leila',
  'Nils',
  'Rosa',
  'Emeka',
  'Hana',
  'Oskar',
  'Wren',
];
const relaySuffixes = ['RIDGE', 'RLY', 'SOLAR', 'PEAK', 'HILL', 'TOWER', 'MESH'];
const letters = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';

/** A Meshtastic node id: `!` and 8 lowercase hex digits. */
export function createNodeId(random: Random): string {
  return `!${random.integer(0, 0xffffffff).toString(16).padStart(8, '0')}`;
}

/** Creates the user of a generated chat: who they are, where they hike, what they own and plan. */
export function createMeshPersona(random: Random, startTime: Date, nodeId?: string): MeshPersona {
  const region = random.pick(regions);
  const name = random.pick(firstNames);
  const suffixLength = random.integer(2, 3);
  const suffix = Array.from({ length: suffixLength }, () => random.pick([...letters])).join('');
  const prefix = random.pick(region.callsignPrefixes);
  const batteryMilliampHours = random.pick([2600, 3000, 3400, 3500]);
  return {
    name,
    // Some prefixes carry their call-area digit (GM4, ZL2); the others get one, as licences do.
    callsign: `${prefix}${/\d$/.test(prefix) ? '' : random.integer(0, 9)}${suffix}`,
    nodeId: nodeId ?? createNodeId(random),
    homeTown: random.pick(region.towns),
    region,
    device: random.pick(devices),
    batteryMilliampHours,
    powerBankMilliampHours: random.pick([5000, 10000, 10000, 20000]),
    buddy: { name: random.pick(firstNames.filter((candidate) => candidate !== name)), nodeId: createNodeId(random) },
    budget: random.pick([80, 100, 120, 150, 200, 250]),
    spent: 0,
    relay: createRelay(random, region),
    trip: {
      route: random.pick(region.routes),
      startDate: dateInDays(startTime, random.integer(10, 40)),
      previousStartDate: undefined,
    },
    lastSignal: undefined,
  };
}

/** A relay on one of the region's hills, named the way mesh operators name them (`LARCH-RIDGE`). */
export function createRelay(random: Random, region: MeshRegion, avoidName?: string): MeshRelay {
  for (;;) {
    const site = random.pick(region.relaySites);
    const name = `${site.split(' ')[0]!.toUpperCase()}-${random.pick(relaySuffixes)}`;
    if (name !== avoidName) return { name, nodeId: createNodeId(random), site };
  }
}

/** The UTC midnight `days` days after `time`. */
export function dateInDays(time: Date, days: number): Date {
  const date = new Date(Date.UTC(time.getUTCFullYear(), time.getUTCMonth(), time.getUTCDate()));
  date.setUTCDate(date.getUTCDate() + days);
  return date;
}
