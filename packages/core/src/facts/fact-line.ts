import type { Fact } from './fact.js';

/**
 * A fact as one short line, `attribute: value` (with the subject first when it is not the user:
 * `MOUNT-SOLAR node id: !fa5aad08`): the wording of the facts block and of the fact lines compaction
 * keeps in a summary, so either can tell that the other already says it.
 */
export function factLine(fact: Pick<Fact, 'subject' | 'attribute' | 'value'>): string {
  return `${fact.subject === 'user' ? '' : `${fact.subject} `}${fact.attribute.replace(/_/g, ' ')}: ${fact.value}`;
}
