import type { Fact } from '@mnemo/core';
import { hashLink, inspectorRoutes } from './inspector-links.js';
import { FactTable } from './fact-table.js';

/** What the facts view shows: the facts valid now (or at `asOf`) and every version, for one user. */
export interface FactsViewProps {
  readonly userId: string;
  /** The day asked for, `YYYY-MM-DD`, when the view is "as of" a date. */
  readonly asOfDay?: string;
  readonly current: readonly Fact[];
  readonly history: readonly Fact[];
}

/** A user's facts with their validity, and the history of each attribute (superseded values with dates). */
export function FactsView({ userId, asOfDay, current, history }: FactsViewProps) {
  const attributes = groupByAttribute(history).filter(
    (versions) => versions.length > 1 || versions.some((fact) => fact.validTo !== undefined),
  );
  return (
    <section data-view="facts">
      <p class="crumbs">
        <a href={hashLink(inspectorRoutes.conversations())}>Conversations</a> › user{' '}
        <a href={hashLink(inspectorRoutes.conversations({ user: userId }))}>{userId}</a>
      </p>
      <h1>Facts of {userId}</h1>
      <p class="bar">
        <button type="button" class="danger" data-action="erase-user" data-user={userId}>
          Erase this user…
        </button>
        <span class="hint">every conversation, message, summary, fact and memory file of {userId}, for good</span>
      </p>
      <form class="bar" data-route={inspectorRoutes.facts(userId)}>
        <label>
          As of (end of day, UTC)
          <input type="date" name="asOf" value={asOfDay ?? ''} />
        </label>
        <button type="submit">Show</button>
        {asOfDay === undefined ? null : <a href={hashLink(inspectorRoutes.facts(userId))}>Now</a>}
      </form>
      <h2>{asOfDay === undefined ? 'Current facts' : `Facts valid on ${asOfDay}`}</h2>
      {current.length === 0 ? (
        <p class="state state-empty" data-empty>
          {asOfDay === undefined
            ? 'No fact about this user yet: extraction runs in the background after messages arrive.'
            : 'No fact was valid on that day.'}
        </p>
      ) : (
        <FactTable facts={current} editable={asOfDay === undefined} />
      )}
      <h2>History by attribute</h2>
      {attributes.length === 0 ? (
        <p class="state state-empty">No value has been superseded or retired yet.</p>
      ) : (
        attributes.map((versions) => (
          <>
            <h3 data-history={`${versions[0]!.subject}/${versions[0]!.attribute}`}>
              {versions[0]!.subject} · <code>{versions[0]!.attribute}</code>
            </h3>
            <FactTable facts={versions} />
          </>
        ))
      )}
    </section>
  );
}

function groupByAttribute(facts: readonly Fact[]): Fact[][] {
  const groups = new Map<string, Fact[]>();
  for (const fact of facts) {
    const key = `${fact.subject}\u0000${fact.attribute}`;
    groups.set(key, [...(groups.get(key) ?? []), fact]);
  }
  return [...groups.values()];
}
