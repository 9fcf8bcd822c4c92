import type { Message } from '../messages/message.js';

/** Why a hit ranks where it does: each retriever's rank and score, recency and the fused score. */
export interface RecallExplanation {
  /** 1-based rank in the keyword (BM25) list, when it was there. */
  readonly keywordRank?: number;
  readonly keywordScore?: number;
  /** 1-based rank in the vector list, when it was there. */
  readonly vectorRank?: number;
  readonly vectorSimilarity?: number;
  /** 1-based rank in the second-hop keyword list (`recallTuning.secondHopWeight`), when it was there and counted. */
  readonly secondHopRank?: number;
  /** 0 (oldest candidate) … 1 (newest): breaks ties between equal scores. */
  readonly recency: number;
  /** Reciprocal rank fusion: Σ 1 / (c + rank) over the lists the hit is in (c = `recallTuning.rrfConstant` in `recall`, 60 in `fuse` by default). */
  readonly fused: number;
  /** True when the query names the message's speaker: the fused score was raised by `recallTuning.speakerBoost`. */
  readonly speaker?: boolean;
  /** True when the message was said in a period the query names: the fused score was raised by `recallTuning.timeBoost`. */
  readonly period?: boolean;
  /** Score carried over from the best adjacent message of the same conversation (`recallTuning.neighbourShare` of its score). */
  readonly neighbour?: number;
  /** Score carried over from the other candidates of the message's episode (`recallTuning.episodeShare` of theirs). */
  readonly episode?: number;
  /** Share (0–1) of the query's terms that the candidates of the message's episode hold: the fused score was × (1 + `recallTuning.episodeCoverage` × this). */
  readonly coverage?: number;
  /**
   * The factor the score (fused, neighbour and episode parts summed) was multiplied by last, when not 1:
   * the length prior (`recallTuning.lengthPrior`) and, for a list question, `recallTuning.listSpeakerBoost`.
   */
  readonly own?: number;
}

/** A recalled message, where it came from, its neighbours and why it ranks there. */
export interface RecallHit {
  readonly conversationId: string;
  readonly message: Message;
  readonly score: number;
  readonly explain: RecallExplanation;
  /** Messages around the hit (oldest first), when `neighbours` was asked for. */
  readonly neighbours?: readonly Message[];
}
