/** What happened to one evidence entry of a question (the question is named by `key` once attached). */
export interface EvidenceRepair {
  /** `<sample_id>#<qa_index>`; empty until the dataset parser attaches it. */
  readonly key: string;
  readonly kind: 'split' | 'rewritten' | 'unparseable' | 'missing' | 'duplicate';
  /** The entry or fragment as written in the file. */
  readonly from: string;
  /** The id it was read as (`rewritten`, `missing`, `duplicate`), or the ids it was split into (`split`). */
  readonly to?: string;
}

/** The usable evidence of a question and the repairs that produced it. */
export interface ResolvedEvidence {
  readonly ids: string[];
  readonly repairs: EvidenceRepair[];
}

const turnId = /^D:?0*(\d+):0*(\d+)$/;

/**
 * Repairs a question's evidence list the way LoCoMo's baseline tool documents it (BASELINES.md,
 * "Skipped / repaired evidence"): packed entries (`"D8:6; D9:17"`, `"D9:1 D4:4"`) are split on `;`,
 * `,` and whitespace; `"D:11:26"` is read as `D11:26` and zero-padded `"D30:05"` as `D30:5`; fragments
 * that are not a turn id (`"D"`) and ids of turns the conversation does not have are dropped. A repeated
 * id counts once (one entry in the file, conv-50#5, lists `D4:5` twice).
 */
export function resolveEvidence(entries: readonly string[], known: ReadonlySet<string>): ResolvedEvidence {
  const ids: string[] = [];
  const repairs: EvidenceRepair[] = [];
  for (const entry of entries) {
    const fragments = entry.split(/[;,\s]+/).filter((fragment) => fragment.length > 0);
    if (fragments.length > 1) repairs.push({ key: '', kind: 'split', from: entry, to: fragments.join(' ') });
    for (const fragment of fragments) {
      const match = turnId.exec(fragment);
      if (match === null) {
        repairs.push({ key: '', kind: 'unparseable', from: fragment });
        continue;
      }
      const id = `D${Number(match[1])}:${Number(match[2])}`;
      if (id !== fragment) repairs.push({ key: '', kind: 'rewritten', from: fragment, to: id });
      if (!known.has(id)) repairs.push({ key: '', kind: 'missing', from: fragment, to: id });
      else if (ids.includes(id)) repairs.push({ key: '', kind: 'duplicate', from: fragment, to: id });
      else ids.push(id);
    }
  }
  return { ids, repairs };
}
