/**
 * The people someone has one of at a time (a partner, a mother): single-valued as fact attributes and as
 * graph predicates, and among the people words a user names them with.
 */
export const oneOfPersonRelations: readonly string[] = [
  'partner',
  'spouse',
  'wife',
  'husband',
  'girlfriend',
  'boyfriend',
  'fiance',
  'mother',
  'father',
];

/**
 * Attributes a subject has one current value of: a new value supersedes the old one instead of
 * joining it. Identity (`name`, `age`, `birthday`, `job`, `employer`, `home_town`, `lives_in`,
 * `callsign`, `handle`, `node_id`, `email`, `phone`), one-of relations (`partner`, `spouse`, `wife`,
 * `husband`, `girlfriend`, `boyfriend`, `mother`, `father`, `boss`), plans and gear with one value at a
 * time (`trip_date`, `budget`, `main_relay`, `battery_capacity`, `timezone`, `language`). Every
 * attribute ending in `_date` is single-valued too (see {@link isSingleValuedAttribute}). Everything
 * else is multi-valued: `likes`, `dislikes`, `prefers`, `owns`, `plans`, `sister`, `buddy`, `friend`, …
 */
export const singleValuedAttributes: ReadonlySet<string> = new Set([
  'name',
  'age',
  'birthday',
  'job',
  'employer',
  'home_town',
  'lives_in',
  'callsign',
  'handle',
  'node_id',
  'email',
  'phone',
  ...oneOfPersonRelations,
  'boss',
  'trip_date',
  'budget',
  'main_relay',
  'battery_capacity',
  'timezone',
  'language',
]);

/** True when a new value of `attribute` replaces the current one: listed in {@link singleValuedAttributes}, or ending in `_date`. */
export function isSingleValuedAttribute(attribute: string): boolean {
  return singleValuedAttributes.has(attribute) || attribute.endsWith('_date');
}
