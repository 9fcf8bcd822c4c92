import type { Fact, FactQuery } from './fact.js';

/**
 * Whether a fact belongs in a listing: matching subject and attribute (case-insensitive), and current
 * (no `validTo`, and not expired at `now` when the query gives it), or valid at `asOf` (`validFrom ≤ asOf <
 * validTo`, not expired by then), or any version with `includeHistory`.
 */
export function isFactVisible(fact: Fact, query: FactQuery): boolean {
  if (query.subject !== undefined && fact.subject.toLowerCase() !== query.subject.toLowerCase()) return false;
  if (query.attribute !== undefined && fact.attribute !== query.attribute) return false;
  if (query.includeHistory === true) return true;
  if (query.asOf !== undefined)
    return (
      fact.validFrom <= query.asOf &&
      (fact.validTo === undefined || query.asOf < fact.validTo) &&
      !isExpired(fact, query.asOf)
    );
  return fact.validTo === undefined && (query.now === undefined || !isExpired(fact, query.now));
}

/** Whether a fact has expired by `at` (ISO 8601): it carries `expiresAt` and that time has come. */
export function isExpired(fact: Fact, at: string): boolean {
  return fact.expiresAt !== undefined && fact.expiresAt <= at;
}
