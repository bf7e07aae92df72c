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
 */
import { isRetryableErrorType } from './events';
import { type EventSink, isObj, type Obj, REFUSED_INDEX, wireIndex } from './common';
import { errorTypeFrom, OpenAIChatAdapter } from './openaiChat';

export class DynamoAdapter extends OpenAIChatAdapter {
  override readonly format = 'dynamo' as const;

  protected override onPayload(p: Obj, out: EventSink): void {
    if (typeof p.event === 'string' && p.choices === undefined) {
      if (p.event === 'error') {
        this.annotatedError(p, out);
        return;
      }
    }
    if (isObj(p.data) && p.choices === undefined && p.object === undefined) {
      super.onPayload(p.data, out); // annotated wrapper
      return;
    }
    super.onPayload(p, out);
  }

  protected override choiceExtras(choice: Obj, out: EventSink): void {
    if (choice.tool_call_completion !== undefined) this.completions(choice.tool_call_completion, out);
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
