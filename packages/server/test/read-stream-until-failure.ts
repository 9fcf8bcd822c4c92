/** A streamed completion as the OpenAI SDK yields it (only what the reader looks at). */
interface ContentChunks {
  [Symbol.asyncIterator](): AsyncIterator<{ choices: { delta: { content?: string | null } }[] }>;
}

/** Reads a streamed completion to its end: the content that arrived, and the error the stream ended with (undefined when it ended whole). */
export async function readStreamUntilFailure(stream: ContentChunks): Promise<{ text: string; failure: unknown }> {
  const pieces: string[] = [];
  const failure = await (async () => {
    for await (const chunk of stream) pieces.push(chunk.choices[0]?.delta.content ?? '');
  })().then(
    () => undefined,
    (error: unknown) => error,
  );
  return { text: pieces.join(''), failure };
}
