/**
 * Gemini / Vertex AI `streamGenerateContent` adapter.
 *
 * The provider sends `GenerateContentResponse` chunks (SSE `data:` objects with `alt=sse`, the
 * elements of the JSON array without it, or `@google/genai` response objects):
 *   {candidates:[{content:{role, parts:[…]}, finishReason?}], usageMetadata?, modelVersion?, responseId?}
 * Parts: `{text}`, `{text, thought: true}`, `{functionCall:{name, args, id?}}`, any of them with a
 * `thoughtSignature`. Vertex `streamFunctionCallArguments` streams one call over several parts:
 *   {functionCall:{name, willContinue:true}}                      opens the call
 *   {functionCall:{partialArgs:[{jsonPath, stringValue|numberValue|boolValue|nullValue, willContinue?}],
 *                  willContinue:true}}                            builds the arguments
 *   {functionCall:{willContinue:true}}                             keeps it open (no-op)
 *   {functionCall:{}}  or a functionCall without willContinue      completes it
 *
 * Emitted:
 * - `message.start {id: responseId, model: modelVersion}` once, on the first chunk.
 * - text parts → `text.delta`; thought parts → `thinking.delta`; `thoughtSignature` →
 *   `thinking.signature`, sent before the events of its part (so a signature that belongs to a
 *   functionCall part comes right before that call's `call.identity`).
 * - whole `functionCall {name, args, id?}` → `call.identity {index, id: id ?? "call_<index>", name}`,
 *   one `call.fragment` with `JSON.stringify(args ?? {})`, `call.complete`. Call index = order of
 *   functionCall parts in the stream (Gemini has no call ordinal).
 * - streamed call → identity when it opens; the arguments are built as an object from the partial
 *   entries (paths like `$.a.b[0].c`, `$['k']`; a stringValue for a path that already holds a string
 *   is appended: long strings arrive in pieces) and sent as ONE fragment `JSON.stringify(built)`
 *   followed by `call.complete` when the call completes. A call still open when a new named
 *   functionCall, a finishReason or end() arrives is completed then (the terminator can be missing).
 * - `usageMetadata` (with counts) → `usage`: promptTokens = promptTokenCount, cachedTokens =
 *   cachedContentTokenCount, outputTokens = candidatesTokenCount + thoughtsTokenCount. Repeated
 *   identical usage is not re-sent.
 * - finishReason → `finish`: STOP → tool_calls if calls were seen since the last finish, else stop;
 *   MAX_TOKENS → length; SAFETY, RECITATION, BLOCKLIST, PROHIBITED_CONTENT, SPII, IMAGE_SAFETY, … →
 *   content_filter; anything else → other. `promptFeedback.blockReason` (prompt blocked, no
 *   candidates) → finish content_filter.
 * - `{error:{code, message, status}}` → `stream.error` (RESOURCE_EXHAUSTED → rate_limit_error,
 *   DEADLINE_EXCEEDED → timeout_error, other statuses kept; UNAVAILABLE/INTERNAL are retryable).
 * - Only candidate 0 is followed. A candidate `index` or a jsonPath position (`[3]`) that is not a
 *   non-negative integer (-1, 0.5, "0", null, true; `[ 1]`, `[1e3]`, `[]`) is refused: `invalid_index`
 *   warning (candidate) or `bad_json_path` (path), never part of a call.
 */
import { type FinishReason, isRetryableErrorType, type StreamEvent, type Usage } from './events';
import { BaseAdapter, type EventSink, isObj, nonEmpty, num, type Obj, REFUSED_INDEX, textIndex, wireIndex } from './common';
import { ANY, OBJECT_SPLIT, type PathKey, pathIs, PIECE_DROP, PIECE_KEEP, type PieceRoute, STRING_HOLD } from './pieces';

const FILTER_REASONS = new Set([
  'SAFETY',
  'RECITATION',
  'BLOCKLIST',
  'PROHIBITED_CONTENT',
  'SPII',
  'IMAGE_SAFETY',
  'IMAGE_PROHIBITED_CONTENT',
  'IMAGE_RECITATION',
]);

export function mapGeminiFinishReason(raw: string, sawCalls: boolean): FinishReason {
  if (raw === 'STOP') return sawCalls ? 'tool_calls' : 'stop';
  if (raw === 'MAX_TOKENS') return 'length';
  if (FILTER_REASONS.has(raw)) return 'content_filter';
  return 'other';
}

type Container = Record<string, unknown> | unknown[];

/** Parse `$.a.b[0]['c']` into keys; undefined when malformed. */
export function parseJsonPath(path: string): PathKey[] | undefined {
  if (!path.startsWith('$')) return undefined;
  const keys: PathKey[] = [];
  let i = 1;
  const n = path.length;
  while (i < n) {
    const c = path[i];
    if (c === '.') {
      let j = i + 1;
      while (j < n && path[j] !== '.' && path[j] !== '[') j++;
      if (j === i + 1) return undefined;
      keys.push(path.slice(i + 1, j));
      i = j;
    } else if (c === '[') {
      const q = path[i + 1];
      if (q === "'" || q === '"') {
        const close = path.indexOf(q + ']', i + 2);
        if (close === -1) return undefined;
        keys.push(path.slice(i + 2, close));
        i = close + 2;
      } else {
        const close = path.indexOf(']', i + 1);
        if (close === -1) return undefined;
        const idx = textIndex(path.slice(i + 1, close));
        if (idx === REFUSED_INDEX || idx > 100_000) return undefined;
        keys.push(idx);
        i = close + 1;
      }
    } else {
      return undefined;
    }
  }
  return keys;
}

function newContainer(nextKey: PathKey): Container {
  // Null-prototype objects: a key like "__proto__" is stored as data, never as a prototype.
  return typeof nextKey === 'number' ? [] : (Object.create(null) as Record<string, unknown>);
}

function getKey(c: Container, k: PathKey): unknown {
  return Array.isArray(c) ? (typeof k === 'number' ? c[k] : undefined) : (c as Record<string, unknown>)[k];
}

function setKey(c: Container, k: PathKey, v: unknown): boolean {
  if (Array.isArray(c)) {
    if (typeof k !== 'number') return false;
    while (c.length < k) c.push(null); // no holes: JSON.stringify would print null anyway
    c[k] = v;
    return true;
  }
  (c as Record<string, unknown>)[String(k)] = v;
  return true;
}

interface OpenCall {
  index: number;
  root: Record<string, unknown>;
}

export class GeminiAdapter extends BaseAdapter {
  readonly format = 'gemini' as const;
  protected override acceptsArrays = true;
  private started = false;
  private nextCall = 0;
  private callsSinceFinish = 0;
  private open: OpenCall | undefined;
  /** Streamed calls (src/wire/pieces.ts) whose identity waits for the rest of their part. */
  private deferred: { index: number; fc: Obj }[] = [];
  private lastUsage = '';

  protected onPayload(p: Obj, out: EventSink): void {
    if (isObj(p.error)) {
      const e = p.error;
      const status = nonEmpty(e.status) ?? (typeof e.code === 'number' ? String(e.code) : 'api_error');
      const type =
        status === 'RESOURCE_EXHAUSTED' || status === '429'
          ? 'rate_limit_error'
          : status === 'DEADLINE_EXCEEDED' || status === '504'
            ? 'timeout_error'
            : status === '503'
              ? 'overloaded_error'
              : status;
      const message = typeof e.message === 'string' ? e.message : '';
      this.failed = true;
      out.push({ type: 'stream.error', error: { type, message }, retryable: isRetryableErrorType(type) });
      return;
    }
    if (!this.started) {
      this.started = true;
      const ev: StreamEvent & { type: 'message.start' } = { type: 'message.start' };
      const id = nonEmpty(p.responseId);
      if (id !== undefined) ev.id = id;
      const model = nonEmpty(p.modelVersion);
      if (model !== undefined) ev.model = model;
      out.push(ev);
    }
    let finish: string | undefined;
    const cands = p.candidates;
    if (Array.isArray(cands)) {
      for (let ci = 0; ci < cands.length; ci++) {
        const cand = cands[ci];
        if (!isObj(cand)) continue;
        const candIndex = wireIndex(cand.index);
        if (candIndex === REFUSED_INDEX) {
          this.refuseIndex(out, 'candidates[].index', cand.index);
          continue;
        }
        if ((candIndex ?? 0) !== 0 || ci > 0) {
          this.warnOnce(
            out,
            'extra_candidate',
            'gemini: only candidate 0 is followed; other candidates ignored',
          );
          continue;
        }
        const content = cand.content;
        if (isObj(content) && Array.isArray(content.parts)) {
          const parts = content.parts;
          for (let i = 0; i < parts.length; i++) {
            const part = parts[i];
            if (isObj(part)) this.part(part, out);
          }
        }
        const fr = nonEmpty(cand.finishReason);
        if (fr !== undefined) finish = fr;
      }
    } else if (isObj(p.promptFeedback) && nonEmpty(p.promptFeedback.blockReason) !== undefined) {
      finish = `PROMPT_${p.promptFeedback.blockReason as string}`;
    }
    if (isObj(p.usageMetadata)) this.usage(p.usageMetadata, out);
    if (finish !== undefined) {
      this.closeOpen(out);
      const reason = finish.startsWith('PROMPT_')
        ? 'content_filter'
        : mapGeminiFinishReason(finish, this.callsSinceFinish > 0);
      this.callsSinceFinish = 0;
      this.terminal = true;
      out.push({ type: 'finish', reason, raw: finish });
    }
  }

  protected override onEnd(out: EventSink): void {
    this.closeOpen(out);
  }

  /**
   * A huge event (src/wire/pieces.ts): a named `functionCall`'s `args` object is argument text,
   * passed on as raw JSON text (its spelling as sent, where a small event gets `JSON.stringify`).
   * Split: the parts before it at `pieceOpen`; the call's identity when the rest of its part is
   * read (a `thoughtSignature` or an `id` after `args` still comes first / counts), `call.complete`
   * once the event has proved valid. A part's `text` is held (read in pieces, emitted in pieces
   * where the payload puts it): whether it is thinking, and the signature that goes before it,
   * come after it in the part.
   */
  pieceRoute(path: readonly PathKey[]): PieceRoute | undefined {
    if (path.length === 6) return pathIs(path, 'candidates', ANY, 'content', 'parts', ANY, 'text') ? STRING_HOLD : undefined;
    return pathIs(path, 'candidates', ANY, 'content', 'parts', ANY, 'functionCall', 'args') ? OBJECT_SPLIT : undefined;
  }

  pieceOpen(head: Obj, path: readonly PathKey[], out: EventSink): number {
    if (isObj(head.error)) return PIECE_KEEP;
    // The value is the head's last element of each array on its path (after a split, earlier
    // elements are not in the head); the candidate's position is the path's.
    const ci = path[1] as number;
    const cands = head.candidates as unknown[];
    const cand = cands[cands.length - 1];
    if (!isObj(cand)) return PIECE_KEEP;
    const candIndex = wireIndex(cand.index);
    if (candIndex === REFUSED_INDEX || (candIndex ?? 0) !== 0 || ci > 0) return PIECE_DROP; // the payload warns
    const parts = isObj(cand.content) ? cand.content.parts : undefined;
    const part = Array.isArray(parts) ? parts[parts.length - 1] : undefined;
    const fc = isObj(part) ? part.functionCall : undefined;
    if (!isObj(fc) || nonEmpty(fc.name) === undefined || fc.willContinue === true || fc.partialArgs !== undefined) return PIECE_KEEP;
    // The head without this part, then the part's signature (when it came before the call).
    (parts as unknown[]).length--;
    this.onPayload(head, out);
    const sig = nonEmpty((part as Obj).thoughtSignature);
    if (sig !== undefined) out.push({ type: 'thinking.signature', signature: sig });
    if (this.open !== undefined) {
      out.push({ type: 'warning', code: 'call_not_terminated', message: `gemini: call ${this.open.index} was not terminated before the next call; completed` });
      this.closeOpen(out);
    }
    const index = this.nextCall++;
    this.callsSinceFinish++;
    this.deferred.push({ index, fc });
    return index;
  }

  pieceClose(index: number, out: EventSink): void {
    out.push({ type: 'call.complete', index });
  }

  /** Identities of streamed calls not yet sent (the event's rest never came, or was broken). */
  pieceEnd(out: EventSink): void {
    for (const d of this.deferred.splice(0)) this.identity(d.index, d.fc, out);
  }

  private part(part: Obj, out: EventSink): void {
    const sig = nonEmpty(part.thoughtSignature);
    if (sig !== undefined) out.push({ type: 'thinking.signature', signature: sig });
    const fc = part.functionCall;
    if (isObj(fc)) {
      this.functionCall(fc, out);
      return;
    }
    const text = part.text;
    if (typeof text === 'string' && text.length > 0) {
      out.push(part.thought === true ? { type: 'thinking.delta', text } : { type: 'text.delta', text });
    }
  }

  private identity(index: number, fc: Obj, out: EventSink): void {
    const ev: StreamEvent & { type: 'call.identity' } = {
      type: 'call.identity',
      index,
      id: nonEmpty(fc.id) ?? `call_${index}`,
    };
    const name = nonEmpty(fc.name);
    if (name !== undefined) ev.name = name;
    out.push(ev);
  }

  private functionCall(fc: Obj, out: EventSink): void {
    const named = nonEmpty(fc.name) !== undefined;
    if (!named && this.deferred.length > 0) {
      // The rest of a streamed call's part (src/wire/pieces.ts): its identity, with an id sent after `args`.
      const d = this.deferred.shift()!;
      const id = nonEmpty(fc.id);
      this.identity(d.index, id !== undefined ? { ...d.fc, id } : d.fc, out);
      return;
    }
    const continues = fc.willContinue === true;
    const partial = fc.partialArgs;
    if (named) {
      if (this.open !== undefined) {
        out.push({
          type: 'warning',
          code: 'call_not_terminated',
          message: `gemini: call ${this.open.index} was not terminated before the next call; completed`,
        });
        this.closeOpen(out);
      }
      const index = this.nextCall++;
      this.callsSinceFinish++;
      this.identity(index, fc, out);
      if (!continues && partial === undefined) {
        // Whole call.
        const args = fc.args;
        out.push({
          type: 'call.fragment',
          index,
          text: JSON.stringify(args === undefined || args === null ? {} : args),
        });
        out.push({ type: 'call.complete', index });
        return;
      }
      const root = Object.create(null) as Record<string, unknown>;
      if (isObj(fc.args)) Object.assign(root, fc.args);
      this.open = { index, root };
    } else if (this.open === undefined) {
      if (partial !== undefined) {
        this.warnOnce(
          out,
          'orphan_partial_args',
          'gemini: partialArgs without an open functionCall; ignored',
        );
      }
      return; // stray terminator / keep-open marker
    }
    if (Array.isArray(partial)) {
      for (const entry of partial) if (isObj(entry)) this.applyPartial(entry, out);
    }
    if (!continues) this.closeOpen(out);
  }

  private applyPartial(entry: Obj, out: EventSink): void {
    const open = this.open as OpenCall;
    const path = typeof entry.jsonPath === 'string' ? parseJsonPath(entry.jsonPath) : undefined;
    if (path === undefined || path.length === 0) {
      this.warnOnce(
        out,
        'bad_json_path',
        'gemini: partialArgs entry with a missing or unsupported jsonPath; ignored',
      );
      return;
    }
    let value: unknown;
    let isString = false;
    if (typeof entry.stringValue === 'string') {
      value = entry.stringValue;
      isString = true;
    } else if (typeof entry.numberValue === 'number') value = entry.numberValue;
    else if (typeof entry.boolValue === 'boolean') value = entry.boolValue;
    else if ('nullValue' in entry) value = null;
    else {
      if ('numberValue' in entry || 'boolValue' in entry || 'structValue' in entry || 'listValue' in entry) {
        this.warnOnce(
          out,
          'bad_partial_value',
          'gemini: partialArgs entry with an unsupported value; ignored',
        );
      }
      return; // a bare continuation marker for a path: no value yet
    }
    let c: Container = open.root;
    for (let i = 0; i < path.length - 1; i++) {
      const k = path[i];
      let next = getKey(c, k);
      if (typeof next !== 'object' || next === null) {
        next = newContainer(path[i + 1]);
        if (!setKey(c, k, next)) {
          this.warnOnce(
            out,
            'bad_json_path',
            'gemini: partialArgs jsonPath does not fit the arguments built so far; ignored',
          );
          return;
        }
      }
      c = next as Container;
    }
    const last = path[path.length - 1];
    if (isString) {
      const prev = getKey(c, last);
      if (typeof prev === 'string') value = prev + (value as string);
    }
    if (!setKey(c, last, value)) {
      this.warnOnce(
        out,
        'bad_json_path',
        'gemini: partialArgs jsonPath does not fit the arguments built so far; ignored',
      );
    }
  }

  private closeOpen(out: EventSink): void {
    const open = this.open;
    if (open === undefined) return;
    this.open = undefined;
    out.push({ type: 'call.fragment', index: open.index, text: JSON.stringify(open.root) });
    out.push({ type: 'call.complete', index: open.index });
  }

  private usage(u: Obj, out: EventSink): void {
    const prompt = num(u.promptTokenCount);
    const cands = num(u.candidatesTokenCount);
    const thoughts = num(u.thoughtsTokenCount);
    const cached = num(u.cachedContentTokenCount);
    if (prompt === undefined && cands === undefined && thoughts === undefined) return;
    const usage: Usage = {};
    if (prompt !== undefined) usage.promptTokens = prompt;
    if (cached !== undefined) usage.cachedTokens = cached;
    if (cands !== undefined || thoughts !== undefined) usage.outputTokens = (cands ?? 0) + (thoughts ?? 0);
    const key = `${usage.promptTokens}/${usage.cachedTokens}/${usage.outputTokens}`;
    if (key === this.lastUsage) return;
    this.lastUsage = key;
    out.push({ type: 'usage', usage });
  }
}
