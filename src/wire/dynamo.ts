/**
 * Dynamo adapter: OpenAI chat chunks as produced by NVIDIA Dynamo's frontend, plus two Dynamo
 * extras. Everything in `openaiChat.ts` applies unchanged (this class extends it).
 *
 * 1. Per-call completion records (completion evidence, SPEC §4). Dynamo keeps a
 *    `tool_call_completion` list on its internal stream response; its public serialisation is not
 *    fixed, so sluice defines the record shape it reads:
 *
 *        tool_call_completion: [ { "index": <call index> }, ... ]     (a bare number is accepted too)
 *
 *    either at the top level of a chunk or inside `choices[i]` (only choice 0 is followed). A chunk
 *    may carry only this field (no choices, no other data), and a record may arrive before the
 *    call's identity or arguments. Each record → `call.complete {index}`, sent after the chunk's own
 *    deltas (so identity/arguments in the same chunk come first). Repeats are forwarded (the
 *    contract allows them). Malformed records → one `bad_completion_record` warning.
 *
 * 2. Annotated error frames. Dynamo's HTTP layer turns an `Annotated { event: "error", comment: [..] }`
 *    into an SSE block `event: error` + `: <message>` comment lines, with no data line. The stream
 *    reader hands such a frame to this adapter as the annotated object
 *    `{ event: "error", comment: ["message", ...] }` (also accepted when pushed directly, e.g. from
 *    an in-process Dynamo client). → `stream.error {error:{type, message}, retryable}`: the message
 *    is the comments joined with " -- "; when a comment is a JSON HttpError `{code, message}` its
 *    status picks the type (429 rate_limit_error, 503/529 overloaded_error, 504 timeout_error,
 *    other 4xx invalid_request_error, 5xx api_error); otherwise the type is `api_error` (retryable).
 *    A wrapped annotated chunk `{ data: <chunk>, event?, comment? }` is unwrapped.
 *
 * 3. Dispatch events (ai-dynamo/dynamo #7114, `--enable-streaming-tool-dispatch`; SPEC §13). Before
 *    the regular chunk that carries a complete call, Dynamo sends an SSE frame
 *    `event: tool_call_dispatch` with `data: {"choice_index": <choice>, "tool_call": <that chunk's
 *    tool_calls[] entry as it is: index, id, type, function {name, arguments}>}`. The stream reader
 *    hands it to this adapter as `{ event: "tool_call_dispatch", data: <the JSON> }` (also accepted
 *    when pushed directly). It is completion evidence for that call, but it never carries the
 *    call's text itself: the dispatched arguments are remembered and the regular chunk(s) that
 *    follow are matched against them, piece by piece (O(fragment)); when the call's streamed
 *    arguments equal the dispatched ones → `call.complete {index}`, right after those fragments.
 *    So the regular chunk is never doubled, and nothing is released before its text arrived.
 *    Not evidence (warning `dispatch_not_evidence`, once per stream; the call then completes by
 *    inference, a finish or the end, as without the event): a dispatch whose arguments are empty
 *    or are not one JSON object (the #13972 bug: a backend that splits a call over several chunks
 *    makes Dynamo dispatch the first piece), one for a call whose arguments had already begun to
 *    stream, one without an index, and a regular chunk whose arguments differ from the dispatched
 *    ones. Only choice 0 is followed; a repeat for the same call id is ignored. A regular chunk so
 *    large that its arguments are read in pieces (src/wire/pieces.ts) is taken to carry the
 *    dispatched value whole (the call's value ends inside that one chunk); a dispatch event that
 *    large is read as a plain chunk and carries no evidence.
 *    `event: reasoning_dispatch` (`{"index", "reasoning_content" | "reasoning"}`: the whole
 *    reasoning block, whose deltas were streamed already) is read and ignored — never an error.
 */
import { isRetryableErrorType } from './events';
import { type EventSink, isObj, nonEmpty, type Obj, REFUSED_INDEX, wireIndex } from './common';
import { errorTypeFrom, OpenAIChatAdapter } from './openaiChat';
import type { PathKey } from './pieces';

/** SSE event names Dynamo sends on `/v1/chat/completions` that the reader hands over with their name. */
export const DYNAMO_NAMED_EVENTS: ReadonlySet<string> = new Set(['tool_call_dispatch', 'reasoning_dispatch']);

/** A dispatched call waiting for its regular chunk: the dispatched arguments and how much of them streamed. */
interface Dispatched {
  expect: string;
  matched: number;
}

export class DynamoAdapter extends OpenAIChatAdapter {
  override readonly format = 'dynamo' as const;
  /** Per call index: a `tool_call_dispatch` whose arguments the regular chunks have not all brought yet. */
  private readonly dispatched = new Map<number, Dispatched>();
  /** Call ids a dispatch was read for (Dynamo sends one per call; a repeat changes nothing). */
  private dispatchedIds: Set<string> | undefined;
  /** Per call index: argument characters the regular chunks brought so far (0 / absent: none yet). */
  private readonly argChars: number[] = [];

  protected override onPayload(p: Obj, out: EventSink): void {
    if (typeof p.event === 'string' && p.choices === undefined) {
      if (p.event === 'error') {
        this.annotatedError(p, out);
        return;
      }
      if (p.event === 'tool_call_dispatch') {
        this.dispatch(p.data, out);
        return;
      }
      if (p.event === 'reasoning_dispatch') return; // the block's deltas were streamed already
    }
    if (isObj(p.data) && p.choices === undefined && p.object === undefined) {
      super.onPayload(p.data, out); // annotated wrapper
      return;
    }
    super.onPayload(p, out);
  }

  protected override choiceExtras(choice: Obj, out: EventSink): void {
    if (choice.tool_call_completion !== undefined) this.completions(choice.tool_call_completion, out);
    const tcs = isObj(choice.delta) ? choice.delta.tool_calls : undefined;
    if (Array.isArray(tcs)) for (const tc of tcs) if (isObj(tc)) this.streamed(tc, out);
  }

  /**
   * One `tool_call_dispatch` event's data: remember the call's dispatched arguments when they are
   * evidence (see the module comment); nothing goes out until the regular chunk brings them.
   */
  private dispatch(data: unknown, out: EventSink): void {
    if (!isObj(data) || !isObj(data.tool_call)) {
      this.warnOnce(out, 'dispatch_not_evidence', 'dynamo: tool_call_dispatch without a tool_call object; ignored');
      return;
    }
    const choice = data.choice_index === undefined ? 0 : wireIndex(data.choice_index);
    if (choice !== 0) return; // only choice 0 is followed (its chunks warn extra_choice)
    const tc = data.tool_call;
    const index = wireIndex(tc.index);
    if (index === undefined || index === REFUSED_INDEX) {
      this.warnOnce(out, 'dispatch_not_evidence', 'dynamo: tool_call_dispatch without a valid call index is not completion evidence; ignored');
      return;
    }
    const id = nonEmpty(tc.id);
    if (id !== undefined) {
      this.dispatchedIds ??= new Set();
      if (this.dispatchedIds.has(id)) return;
      this.dispatchedIds.add(id);
    }
    const args = isObj(tc.function) ? argumentText(tc.function.arguments) : undefined;
    if (args === undefined || !isJsonObject(args)) {
      this.warnOnce(
        out,
        'dispatch_not_evidence',
        `dynamo: tool_call_dispatch for call ${index} with ${args === undefined || args.trim().length === 0 ? 'empty' : 'incomplete or non-object'} arguments (${args?.length ?? 0} chars) is not completion evidence; waiting for the call's own arguments`,
      );
      return;
    }
    if ((this.argChars[index] ?? 0) > 0) {
      this.warnOnce(out, 'dispatch_not_evidence', `dynamo: tool_call_dispatch for call ${index} after its arguments began to stream is not completion evidence; ignored`);
      return;
    }
    this.dispatched.set(index, { expect: args, matched: 0 });
  }

  /** A regular chunk's tool_calls entry (after its events went out): match it against a dispatch. */
  private streamed(tc: Obj, out: EventSink): void {
    const index = wireIndex(tc.index);
    if (index === undefined || index === REFUSED_INDEX) return;
    const text = isObj(tc.function) ? argumentText(tc.function.arguments) : undefined;
    if (text === undefined || text.length === 0) return;
    this.argChars[index] = (this.argChars[index] ?? 0) + text.length;
    const d = this.dispatched.get(index);
    if (d === undefined) return;
    if (!d.expect.startsWith(text, d.matched)) {
      this.dispatched.delete(index);
      this.warnOnce(out, 'dispatch_not_evidence', `dynamo: call ${index} streamed arguments that differ from its tool_call_dispatch; that dispatch is not completion evidence`);
      return;
    }
    d.matched += text.length;
    if (d.matched === d.expect.length) {
      this.dispatched.delete(index);
      out.push({ type: 'call.complete', index });
    }
  }

  /** A huge regular chunk's arguments were read in pieces (src/wire/pieces.ts): that call's value ended in it. */
  override pieceOpen(head: Obj, path: readonly PathKey[], out: EventSink): number {
    const index = super.pieceOpen(head, path, out);
    if (index >= 0) {
      const d = this.dispatched.get(index);
      // Arguments already streamed before this chunk: it is not the dispatched value whole.
      if (d !== undefined && d.matched > 0) this.dispatched.delete(index);
    }
    return index;
  }

  override pieceClose(index: number, out: EventSink): void {
    super.pieceClose(index, out);
    this.argChars[index] = (this.argChars[index] ?? 0) + 1;
    if (this.dispatched.delete(index)) out.push({ type: 'call.complete', index });
  }

  protected override chunkExtras(chunk: Obj, out: EventSink): void {
    if (chunk.tool_call_completion !== undefined) this.completions(chunk.tool_call_completion, out);
  }

  private completions(records: unknown, out: EventSink): void {
    if (!Array.isArray(records)) {
      this.warnOnce(out, 'bad_completion_record', 'dynamo: tool_call_completion is not an array; ignored');
      return;
    }
    for (const r of records) {
      const raw = isObj(r) ? r.index : r;
      const index = wireIndex(raw);
      if (index === undefined) {
        this.warnOnce(
          out,
          'bad_completion_record',
          'dynamo: tool_call_completion record without an index; ignored',
        );
      } else if (index === REFUSED_INDEX) {
        this.refuseIndex(out, 'tool_call_completion[].index', raw);
      } else {
        out.push({ type: 'call.complete', index });
      }
    }
  }

  private annotatedError(p: Obj, out: EventSink): void {
    const comments = Array.isArray(p.comment)
      ? p.comment.filter((c): c is string => typeof c === 'string')
      : typeof p.comment === 'string'
        ? [p.comment]
        : [];
    let type = 'api_error';
    const texts: string[] = [];
    for (const c of comments) {
      const t = c.trim();
      if (t.startsWith('{')) {
        try {
          const j: unknown = JSON.parse(t);
          if (isObj(j) && (j.code !== undefined || j.message !== undefined)) {
            type = errorTypeFrom(j.type ?? j.error_type, j.code);
            if (typeof j.message === 'string') texts.push(j.message);
            continue;
          }
        } catch {
          // not JSON: keep as text
        }
      }
      if (t.length > 0) texts.push(t);
    }
    const message = texts.length > 0 ? texts.join(' -- ') : 'unspecified error';
    out.push({ type: 'stream.error', error: { type, message }, retryable: isRetryableErrorType(type) });
  }
}

/** A tool call's `arguments` as text (a few servers send an object). */
function argumentText(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  return isObj(v) ? JSON.stringify(v) : undefined;
}

/** One JSON object (what a released call needs), parsed once per dispatch event. */
function isJsonObject(text: string): boolean {
  if (text.trim().length === 0) return false;
  try {
    const v: unknown = JSON.parse(text);
    return isObj(v);
  } catch {
    return false;
  }
}
