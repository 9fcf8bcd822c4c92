import { ChatStreamAssembler, type AssistantReply } from './assistant-reply.js';
import { UpstreamTimeoutError } from './upstream.js';

/** Reassembles a reply from an event stream fed in pieces of any size. */
export interface StreamAssembler {
  push(text: string): void;
  /** The reply so far; `complete` false when the stream ended before its protocol's last event. */
  finish(): AssistantReply;
}

/** What the relay needs to know of the protocol a stream speaks: how to read its reply, and how to tell its SDKs it broke off. */
export interface StreamProtocol {
  createAssembler(): StreamAssembler;
  /** The event (whole, with its blank-line ending) that makes this protocol's SDKs raise `message` with `code`. */
  failureEvent(message: string, code: 'upstream_timeout' | 'upstream_stream_broken'): string;
  /** Why a stream that closed before its last event is broken, e.g. "without a finish reason or [DONE]". */
  readonly unfinished: string;
}

/** OpenAI chat completions: `data: {"error": …}`, the way OpenAI reports a failure mid-stream (its SDKs raise it). */
export const chatStreamProtocol: StreamProtocol = Object.freeze({
  createAssembler: () => new ChatStreamAssembler(),
  failureEvent: (message: string, code: string) =>
    `data: ${JSON.stringify({ error: { message, type: 'upstream_error', code } })}\n\n`,
  unfinished: 'without a finish reason or [DONE]',
});

/**
 * Pipes an upstream event stream to the client byte for byte while reassembling the reply, and hands
 * the reply to `onEnd` (which must report its own failures) once the upstream is finished. A client
 * that hangs up cancels only its side: the upstream is read to its end all the same, so the reply is
 * never lost. An upstream that breaks off gets the client an error event after what arrived (the way
 * OpenAI reports a failure mid-stream; OpenAI SDKs raise it; `protocol` says how for other protocols), and `onEnd` gets the partial reply
 * (`complete: false`); so does one whose stream closes without a finish reason or `[DONE]`. `describeFailure` turns the read error into what the event says (e.g. an
 * {@link UpstreamTimeoutError} when the upstream fell silent past the idle timeout).
 */
export function relayStream(
  upstream: ReadableStream<Uint8Array>,
  onEnd: (reply: AssistantReply) => Promise<void>,
  describeFailure: (error: unknown) => Error = (error) => (error instanceof Error ? error : new Error(String(error))),
  protocol: StreamProtocol = chatStreamProtocol,
): ReadableStream<Uint8Array> {
  // Chunks wait here until the client pulls them: the client reads at its pace, and the upstream is
  // drained at its own, whether or not anyone still listens.
  const queue: Uint8Array[] = [];
  let ended = false;
  let clientGone = false;
  let wake: (() => void) | undefined;
  const notify = () => {
    wake?.();
    wake = undefined;
  };

  void (async () => {
    const assembler = protocol.createAssembler();
    const decoder = new TextDecoder();
    const reader = upstream.getReader();
    let broken = false;
    try {
      for (let part = await reader.read(); !part.done; part = await reader.read()) {
        assembler.push(decoder.decode(part.value, { stream: true }));
        if (!clientGone) queue.push(part.value);
        notify();
      }
      assembler.push(decoder.decode());
    } catch (error) {
      broken = true;
      if (!clientGone) queue.push(brokenStreamEvent(protocol, describeFailure(error)));
    }
    const reply = assembler.finish();
    // A stream that closed cleanly without a finish reason or [DONE] (garbage events, a truncated body)
    // is broken too: the client is told so, as when the socket breaks.
    if (!broken && !reply.complete && !clientGone)
      queue.push(brokenStreamEvent(protocol, new Error(`the upstream ended its event stream ${protocol.unfinished}`)));
    ended = true;
    notify();
    await onEnd(reply);
  })().catch(() => {
    // onEnd reports its own failures; nothing may escape as an unhandled rejection of a detached task.
  });

  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        while (queue.length === 0 && !ended) await new Promise<void>((resolve) => (wake = resolve));
        const next = queue.shift();
        if (next !== undefined) controller.enqueue(next);
        else controller.close();
      },
      cancel() {
        // The client hung up: stop keeping chunks for it, but keep reading the upstream to the end.
        clientGone = true;
        queue.length = 0;
      },
    },
    { highWaterMark: 0 },
  );
}

// Erroring the response stream instead would make @hono/node-server answer a bare 500 when the failure
// comes within its first reads, and would drop the chunks still queued for the client.
function brokenStreamEvent(protocol: StreamProtocol, error: Error): Uint8Array {
  const code = error instanceof UpstreamTimeoutError ? 'upstream_timeout' : 'upstream_stream_broken';
  const message = `mnemo: the upstream stream broke off (${error.message}); the reply is incomplete`;
  // The blank lines end an event the upstream may have cut in half, so this one parses on its own.
  return new TextEncoder().encode(`\n\n${protocol.failureEvent(message, code)}`);
}
