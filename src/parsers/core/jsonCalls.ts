/**
 * A JSON array of `{"name", "arguments"}` call objects, as Nemotron (`<TOOLCALL>[…]</TOOLCALL>`)
 * and Mistral before tokenizer v11 (`[TOOL_CALLS][…]`) write them. Each object is one call;
 * its completion evidence is the `}` that closes it (the array structure makes it final), so
 * the first call of a batch is released before the second is written.
 */
import { BaseParser, TEXT } from './base';
import { CallSlot } from './emitter';
import { H_DONE, H_FAIL, H_STOP, JsonEnvelope } from './json';
import { MarkerSet } from './markers';

export const ARRAY = 20;
export const ITEM = 21;
export const ARRAY_POST = 22;
export const ARRAY_SKIP = 23;

export abstract class JsonCallsParser extends BaseParser {
  /** The marker closing the call section (`</TOOLCALL>`), or null when the array is all there is. */
  protected abstract readonly sectionClose: string | null;
  private closeSet: MarkerSet | null = null;
  protected call: CallSlot | null = null;
  private env: JsonEnvelope | null = null;
  private skipStop = -1;

  /** `[` was consumed: the array of calls begins. */
  protected beginArray(): void {
    this.confirmMarkup();
    this.mode = ARRAY;
  }

  /**
   * Whether call objects may carry the model's id (`"id"` after `"arguments"`, Mistral): the
   * identity then comes in two events, the name when it is read and the id (the model's, else
   * `call_<index>`) just before `call.complete`.
   */
  protected keepsModelIds(): boolean {
    return false;
  }

  private modelId: string | undefined;

  protected newEnvelope(): JsonEnvelope {
    const call = new CallSlot(this.em);
    this.call = call;
    this.modelId = undefined;
    if (this.keepsModelIds()) {
      this.env = new JsonEnvelope({
        name: (n) => call.named(n),
        args: (s) => call.fragment(s),
        id: (id) => {
          this.modelId ??= id;
        },
      });
    } else this.env = new JsonEnvelope({ name: (n) => call.identity(n), args: (s) => call.fragment(s) });
    return this.env;
  }

  /** The call object closed: its id (when deferred) and `call.complete`. */
  private completeItem(): void {
    if (this.keepsModelIds()) this.call?.identify(this.modelId);
    this.call?.complete();
  }

  /** One step of the array modes; undefined when the mode is not one of them. */
  protected stepArray(): boolean | undefined {
    const close = this.sectionClose;
    switch (this.mode) {
      case ARRAY: {
        this.skipWs();
        if (this.atEnd) return false;
        const c = this.buf.charCodeAt(this.pos);
        if (c === 123 /* { */) {
          this.newEnvelope();
          this.mode = ITEM;
          return true;
        }
        if (c === 44 /* , */) {
          this.pos++;
          return true;
        }
        if (c === 93 /* ] */) {
          this.pos++;
          this.mode = ARRAY_POST;
          return true;
        }
        if (close !== null) {
          const t = this.take(close);
          if (t === 'maybe') return false;
          if (t === 'yes') {
            this.warn('parser.unclosed_array', 'call section closed before its JSON array');
            return this.endSection();
          }
        }
        return this.malformed();
      }
      case ITEM: {
        const env = this.env as JsonEnvelope;
        const stop = close === null ? -1 : close.charCodeAt(0);
        this.pos = env.feed(this.buf, this.pos, this.buf.length, stop, this.skipStop);
        this.skipStop = -1;
        if (env.halt === H_DONE) {
          this.completeItem();
          this.call = null;
          this.env = null;
          this.mode = ARRAY;
          return true;
        }
        if (env.halt === H_FAIL) return this.malformed();
        if (env.halt === H_STOP && close !== null) {
          const t = this.take(close);
          if (t === 'maybe') return false;
          if (t === 'yes') {
            this.warn(
              'parser.unclosed_call',
              'call section closed inside a call object; call completed there',
            );
            return this.endSection();
          }
          this.skipStop = this.pos;
          return true;
        }
        return false;
      }
      case ARRAY_POST: {
        if (close === null) return this.endSection();
        const from = this.pos;
        this.skipWs();
        if (this.atEnd) {
          this.pos = from;
          return false;
        }
        const t = this.take(close);
        if (t === 'maybe') return false;
        if (t === 'no') {
          // Text after the calls keeps its leading whitespace.
          this.pos = from;
          this.warn('parser.unclosed_section', `JSON array of calls not followed by ${close}`);
        }
        return this.endSection();
      }
      case ARRAY_SKIP: {
        this.closeSet ??= new MarkerSet([close as string]);
        const m = this.streamUntil(this.closeSet, () => {});
        if (m === null) return false;
        return this.endSection();
      }
    }
    return undefined;
  }

  private malformed(): boolean {
    this.warn('parser.malformed_call', 'call section is not a JSON array of {"name", "arguments"} objects');
    if (this.sectionClose === null) {
      // Nothing marks the end of the section: the call in progress stays open, the text resumes.
      this.call = null;
      this.env = null;
      this.afterMarkup();
      return true;
    }
    this.mode = ARRAY_SKIP;
    return true;
  }

  private endSection(): boolean {
    if (this.call) this.completeItem();
    this.call = null;
    this.env = null;
    this.afterMarkup();
    return true;
  }

  /** End of stream inside the array modes. */
  protected finishArray(): void {
    if (this.mode === ITEM || this.mode === ARRAY_SKIP) {
      this.warn('parser.unclosed_call', 'stream ended inside a call; left without completion');
    } else if (this.mode === ARRAY && this.sectionClose !== null) {
      this.warn('parser.unclosed_section', 'stream ended inside the call section');
    }
    this.mode = TEXT;
  }
}
