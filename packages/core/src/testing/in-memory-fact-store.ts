import { MemoryError } from '../errors/memory-error.js';
import type { Fact, FactQuery, NewFact } from '../facts/fact.js';
import type { UserScope } from '../messages/scope.js';
import { isFactVisible } from '../facts/fact-rules.js';

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

  retire(user: UserScope, factId: string, at: string): Fact {
    const index = this.#currentIndex(user, factId);
    const retired = { ...this.#facts[index]!, validTo: at };
    this.#facts[index] = retired;
    return retired;
  }

  list(user: UserScope, query: FactQuery): Fact[] {
    return this.#facts.filter((fact) => fact.tenantId === user.tenantId && fact.userId === user.userId && isFactVisible(fact, query));
  }

  /** Every fact, in the order written. */
  all(): readonly Fact[] {
    return this.#facts;
  }

  /** Replaces every fact (an import). */
  replaceAll(facts: readonly Fact[]): void {
    this.#facts.splice(0, this.#facts.length, ...facts);
  }

  deleteUser(user: UserScope): void {
    for (let index = this.#facts.length - 1; index >= 0; index -= 1) {
      const fact = this.#facts[index]!;
      if (fact.tenantId === user.tenantId && fact.userId === user.userId) this.#facts.splice(index, 1);
    }
  }

  #currentIndex(user: UserScope, factId: string): number {
    const index = this.#facts.findIndex((fact) => fact.id === factId && fact.tenantId === user.tenantId && fact.userId === user.userId);
    if (index < 0) throw new MemoryError('not_found', `fact ${factId} does not exist`, { details: { factId } });
    if (this.#facts[index]!.validTo !== undefined) throw new MemoryError('conflict', `fact ${factId} is no longer current`, { details: { factId } });
    return index;
  }
}
