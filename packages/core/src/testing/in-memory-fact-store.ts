import { MemoryError } from '../errors/memory-error.js';
import type { Fact, FactQuery, NewFact } from '../facts/fact.js';
import type { UserScope } from '../messages/scope.js';
import { isFactVisible } from '../facts/fact-rules.js';
import type { KnowledgeErasurePlan } from '../store/message-erasure.js';

/** The facts of {@link InMemoryStore}. */
export class InMemoryFactStore {
  readonly #facts: Fact[] = [];

  insert(user: UserScope, fact: NewFact, supersedes: string | undefined): Fact {
    const stored: Fact = { ...fact, ...user, id: crypto.randomUUID() };
    if (supersedes !== undefined) {
      const index = this.#currentIndex(user, supersedes);
      this.#facts[index] = { ...this.#facts[index]!, validTo: fact.validFrom, supersededBy: stored.id };
    }
    this.#facts.push(stored);
    return stored;
  }

  retire(user: UserScope, factId: string, at: string, supersededBy?: string): Fact {
    const index = this.#currentIndex(user, factId);
    if (
      supersededBy !== undefined &&
      !this.#facts.some(
        (fact) => fact.id === supersededBy && fact.tenantId === user.tenantId && fact.userId === user.userId,
      )
    ) {
      throw new MemoryError('not_found', `fact ${supersededBy} does not exist`, { details: { factId: supersededBy } });
    }
    const retired = { ...this.#facts[index]!, validTo: at, ...(supersededBy === undefined ? {} : { supersededBy }) };
    this.#facts[index] = retired;
    return retired;
  }

  setExpiry(user: UserScope, factId: string, expiresAt: string | undefined): Fact {
    const index = this.#currentIndex(user, factId);
    const { expiresAt: _old, ...rest } = this.#facts[index]!;
    const updated: Fact = expiresAt === undefined ? rest : { ...rest, expiresAt };
    this.#facts[index] = updated;
    return updated;
  }

  list(user: UserScope, query: FactQuery): Fact[] {
    return this.#facts.filter(
      (fact) => fact.tenantId === user.tenantId && fact.userId === user.userId && isFactVisible(fact, query),
    );
  }

  /** Every fact, in the order written. */
  all(): readonly Fact[] {
    return this.#facts;
  }

  /** Replaces every fact (an import). */
  replaceAll(facts: readonly Fact[]): void {
    this.#facts.splice(0, this.#facts.length, ...facts);
  }

  /** Applies the facts' part of an erasure plan. */
  applyErasure(user: UserScope, plan: KnowledgeErasurePlan): void {
    const removed = new Set(plan.deleteFactIds);
    const updates = new Map(plan.updateFacts.map((update) => [update.id, update]));
    const relinks = new Map(plan.relinkFacts.map((relink) => [relink.id, relink]));
    for (let index = this.#facts.length - 1; index >= 0; index -= 1) {
      const fact = this.#facts[index]!;
      if (fact.tenantId !== user.tenantId || fact.userId !== user.userId) continue;
      if (removed.has(fact.id)) {
        this.#facts.splice(index, 1);
        continue;
      }
      const update = updates.get(fact.id);
      const relink = relinks.get(fact.id);
      let next: Fact = update === undefined ? fact : { ...fact, sourceSeqs: update.sourceSeqs, text: update.text };
      if (relink !== undefined) {
        const { validTo: _validTo, supersededBy: _supersededBy, ...rest } = next;
        next = {
          ...rest,
          ...(relink.validTo === undefined ? {} : { validTo: relink.validTo }),
          ...(relink.supersededBy === undefined ? {} : { supersededBy: relink.supersededBy }),
        };
      }
      this.#facts[index] = next;
    }
  }

  deleteUser(user: UserScope): void {
    for (let index = this.#facts.length - 1; index >= 0; index -= 1) {
      const fact = this.#facts[index]!;
      if (fact.tenantId === user.tenantId && fact.userId === user.userId) this.#facts.splice(index, 1);
    }
  }

  #currentIndex(user: UserScope, factId: string): number {
    const index = this.#facts.findIndex(
      (fact) => fact.id === factId && fact.tenantId === user.tenantId && fact.userId === user.userId,
    );
    if (index < 0) throw new MemoryError('not_found', `fact ${factId} does not exist`, { details: { factId } });
    if (this.#facts[index]!.validTo !== undefined)
      throw new MemoryError('conflict', `fact ${factId} is no longer current`, { details: { factId } });
    return index;
  }
}
