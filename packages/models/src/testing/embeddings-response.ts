import { HashedEmbedder } from '@mnemo/core';

/**
 * Answers an embeddings request with exactly these vectors (sent as they are, not normalized, in this
 * order with `index` 0, 1, …), e.g. to send fewer vectors than inputs or a vector of the wrong length.
 */
export interface ScriptedVectorsReply {
  readonly vectors: readonly (readonly number[])[];
  readonly delayMs?: number;
}

/** A status code and JSON body for the server to send. */
export interface EmbeddingsAnswer {
  readonly status: number;
  readonly body: unknown;
}

// Deterministic vectors are scaled to this length, so that a client that forgets to normalize is caught.
const deterministicNorm = 2;

/**
 * The response to `POST /v1/embeddings`: `reply.vectors` when scripted, else one deterministic vector per
 * input (a hashed bag of words, so similar texts get similar vectors, of length 2, with the request's
 * `dimensions` or `defaultDimensions` components). Like OpenAI, it answers 400 to an input that is not
 * a string or a list of non-empty strings, and encodes the vectors as base64 float32 when
 * `encoding_format` is `base64`.
 */
export async function buildEmbeddingsResponse(
  request: Record<string, unknown>,
  reply: ScriptedVectorsReply | undefined,
  defaultDimensions: number,
): Promise<EmbeddingsAnswer> {
  const input = typeof request.input === 'string' ? [request.input] : request.input;
  if (
    !Array.isArray(input) ||
    input.length === 0 ||
    !input.every((text) => typeof text === 'string' && text.length > 0)
  ) {
    return {
      status: 400,
      body: invalidRequest(
        "'$.input' is invalid: send a non-empty string or a non-empty list of non-empty strings",
        'input',
      ),
    };
  }
  const texts = input as string[];
  const requested = request.dimensions;
  if (requested !== undefined && (typeof requested !== 'number' || !Number.isInteger(requested) || requested < 1)) {
    return { status: 400, body: invalidRequest("'dimensions' must be a positive integer", 'dimensions') };
  }
  const dimensions = typeof requested === 'number' ? requested : defaultDimensions;
  const vectors = reply?.vectors ?? (await deterministicVectors(texts, dimensions));
  const base64 = request.encoding_format === 'base64';
  const promptTokens = texts.reduce((sum, text) => sum + Math.ceil(text.length / 4), 0);
  return {
    status: 200,
    body: {
      object: 'list',
      data: vectors.map((vector, index) => ({
        object: 'embedding',
        index,
        embedding: base64 ? Buffer.from(Float32Array.from(vector).buffer).toString('base64') : vector,
      })),
      model: typeof request.model === 'string' ? request.model : 'scripted-embedding-model',
      usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
    },
  };
}

async function deterministicVectors(texts: string[], dimensions: number): Promise<number[][]> {
  const unit = await new HashedEmbedder({ dimensions }).embed(texts);
  return unit.map((vector) => Array.from(vector, (value) => value * deterministicNorm));
}

function invalidRequest(message: string, param: string): unknown {
  return { error: { message, type: 'invalid_request_error', param, code: null } };
}
