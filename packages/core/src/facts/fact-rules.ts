import type { Fact, FactQuery } from './fact.js';

/**
 * Whether a fact belongs in a listing: matching subject and attribute (case-insensitive), and current
 * (no `validTo`), or valid at `asOf` (`validFrom ≤ asOf < validTo`), or any version with `includeHistory`.
 */
export function isFactVisible(fact: Fact, query: FactQuery): boolean {
  if (query.subject !== undefined && fact.subject.toLowerCase() !== query.subject.toLowerCase()) return false;
  if (query.attribute !== undefined && fact.attribute !== query.attribute) return false;
  if (query.includeHistory === true) return true;
  if (query.asOf !== undefined) return fact.validFrom <= query.asOf && (fact.validTo === undefined || query.asOf < fact.validTo);
  return fact.validTo === undefined;
}
