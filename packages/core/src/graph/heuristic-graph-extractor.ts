import type { SummarySourceMessage } from '../messages/summary-source-message.js';
import { captureName, eachCue } from '../facts/capture-span.js';
import type { ExtractedFact } from '../facts/fact-extractor.js';
import { HeuristicFactExtractor } from '../facts/heuristic-fact-extractor.js';
import { personRelations, petRelations } from '../facts/people-fact-rules.js';
import { readStatements, type Statement } from '../facts/read-statements.js';
import type { Entity } from './entity.js';
import { GraphBuilder } from './graph-builder.js';
import type { ExtractedGraph, GraphExtractor } from './graph-extractor.js';
import { userEntityAlias } from './store-graph.js';

// Relay and device names: ALL-CAPS words joined by dashes, two of them with at least two letters ("LARCH-RIDGE", not "USB-C" or "LMR-240").
const deviceName = /(?<![\w-])[A-Z][A-Z0-9]*(?:-[A-Z0-9]+)+(?![\w-])/g;
// Hardware models: letters then at least three digits ("RAK4631").
const deviceModel = /(?<![\w-])[A-Z]{2,}\d{3,}[A-Z]?(?![\w-])/g;
const nodeIdPattern = /(?<![\w!])![0-9a-f]{8}\b/gi;
const placeCue = /\b(?:in|at|to|from|near|around|im|nach|aus|en|à|de|desde)\s+/gi;
const people = new Set(personRelations);
const pets = new Set(petRelations);

function isDeviceName(word: string): boolean {
  return word.split('-').filter((part) => (part.match(/[A-Z]/g)?.length ?? 0) >= 2).length >= 2;
}

/**
 * The offline graph extractor (`heuristic@1`): no LLM. From the user's statements (their messages only;
 * questions and hypotheticals skipped, as in {@link HeuristicFactExtractor}, whose facts it reuses) it
 * reads entities — the user (named by their stated name once known, with `user` and their callsign or
 * handle as aliases), people named by relation ("my buddy Tomas", type `person`), places after
 * in/at/to/from/near/around and where people live (`place`), employers (`organization`), relay and
 * device names in ALL-CAPS-WITH-DASHES, hardware models like RAK4631 and node ids like `!a3f9c2d1`
 * (`device`), and other capitalized names mid-sentence (`other`) — and relations: `user —buddy→ Tomas`,
 * `Tomas —lives_in→ Bend`, `user —home_town→ Hood River`, `user —works_at→ Acme`,
 * `user —uses_relay→ LARCH-RIDGE` (a device named in a sentence about a relay, or a node id right after "via"),
 * `LARCH-RIDGE —located_at→ Larch Mtn`, and `Tomas —has_node→ !7be104c2`.
 * Node ids: a person's node is a `device` entity of its own linked by `has_node` (people change radios;
 * an alias would outlive the swap), while the id of a named device ("LARCH-RIDGE …, id !5c11e08a") is
 * an alias of that device. A callsign is an alias of its person. Deterministic.
 */
export class HeuristicGraphExtractor implements GraphExtractor {
  readonly id = 'heuristic@1';
  readonly #facts = new HeuristicFactExtractor();

  async extract(input: {
    messages: readonly SummarySourceMessage[];
    knownEntities: readonly Entity[];
    signal?: AbortSignal;
  }): Promise<ExtractedGraph> {
    input.signal?.throwIfAborted();
    const graph = new GraphBuilder(input.knownEntities);
    const facts = await this.#facts.extract({
      messages: input.messages,
      knownFacts: [],
      ...(input.signal === undefined ? {} : { signal: input.signal }),
    });
    for (const fact of facts) if (fact.polarity !== 'negate') addFact(graph, fact);
    for (const message of input.messages) {
      if (message.role !== 'user') continue;
      for (const statement of readStatements(message.content)) addMentions(graph, statement, message.seq);
    }
    return graph.build();
  }
}

function addFact(graph: GraphBuilder, fact: ExtractedFact): void {
  const seq = fact.sourceSeqs[fact.sourceSeqs.length - 1]!;
  const deviceSubject = isDeviceName(fact.subject) || graph.typeOf(fact.subject) === 'device';
  const subject =
    fact.subject === 'user' ? userEntityAlias : graph.addEntity(fact.subject, deviceSubject ? 'device' : 'person');
  const link = (predicate: string, object: string, type: string): void =>
    graph.addRelation(subject, predicate, graph.addEntity(object, type), seq);
  const attribute = fact.attribute;
  if (attribute === 'name' && subject === userEntityAlias) graph.nameUser(fact.value);
  else if (attribute === 'callsign' || attribute === 'handle') graph.addAlias(subject, fact.value, 'person');
  else if (attribute === 'node_id' && deviceSubject) graph.addAlias(subject, fact.value, 'device');
  else if (attribute === 'node_id') link('has_node', fact.value, 'device');
  else if (people.has(attribute)) link(attribute, fact.value, 'person');
  else if (pets.has(attribute)) link(attribute, fact.value, 'other');
  else if ((attribute === 'lives_in' || attribute === 'home_town') && /^\p{Lu}/u.test(fact.value))
    link(attribute, fact.value, 'place');
  else if (attribute === 'employer') link('works_at', fact.value, 'organization');
  else if (attribute === 'main_relay') link('uses_relay', fact.value, 'device');
}

function addMentions(graph: GraphBuilder, statement: Statement, seq: number): void {
  const { text, match } = statement;
  const aboutRelays = /\b(?:relay|relays|via|repeater)\b/i.test(match);
  for (const found of match.matchAll(deviceName)) {
    if (!isDeviceName(found[0])) continue;
    const device = graph.addEntity(text.slice(found.index, found.index + found[0].length), 'device');
    if (aboutRelays) graph.addRelation(userEntityAlias, 'uses_relay', device, seq);
    // "LARCH-RIDGE (!5c11e08a)": the id in parentheses names the device.
    const id = /^\s*\((![0-9a-f]{8})\)/i.exec(match.slice(found.index + found[0].length));
    if (id !== null) graph.addAlias(device, id[1]!, 'device');
    const where = /^\s+(?:on|at|in)\s+/i.exec(match.slice(found.index + found[0].length));
    const place =
      where === null ? undefined : captureName(text, match, found.index + found[0].length + where[0].length, 3);
    if (place !== undefined && /\p{Ll}/u.test(place.value))
      graph.addRelation(device, 'located_at', graph.addEntity(place.value, 'place'), seq);
  }
  for (const found of match.matchAll(deviceModel)) graph.addEntity(found[0], 'device');
  for (const found of match.matchAll(nodeIdPattern)) {
    const device = graph.addEntity(found[0], 'device');
    if (/\bvia\s+$/i.test(match.slice(0, found.index))) graph.addRelation(userEntityAlias, 'uses_relay', device, seq);
  }
  const taken: [number, number][] = [];
  eachCue(match, placeCue, (_found, end) => {
    const place = captureName(text, match, end, 3);
    if (place === undefined || !/^\p{Lu}\p{Ll}/u.test(place.value)) return;
    taken.push([place.start, place.end]);
    const type = graph.typeOf(place.value);
    if (type === undefined || type === 'other' || type === 'place') graph.addEntity(place.value, 'place');
  });
  // Other proper names: capitalized words inside the sentence (its first word is capitalized anyway).
  for (const found of match.matchAll(/(?<=[\s(,;:])\p{Lu}\p{Ll}/gu)) {
    if (taken.some(([start, end]) => found.index >= start && found.index < end)) continue;
    const name = captureName(text, match, found.index, 3);
    if (name === undefined) continue;
    taken.push([name.start, name.end]);
    graph.addEntity(name.value, 'other');
  }
}
