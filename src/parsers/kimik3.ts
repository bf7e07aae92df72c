/**
 * Kimi K3 (Moonshot), from its chat template (llama.cpp models/templates/Kimi-K3.jinja). Unlike
 * Kimi K2 (kimi.ts), K3 writes "XTML": tags `<|open|>TAG attr="v"<|sep|>` … `<|close|>TAG<|sep|>`
 * built from special tokens, with a think channel, a response channel and a tools channel:
 *
 *   plan<|close|>think<|sep|><|open|>response<|sep|>Checking.<|close|>response<|sep|>
 *   <|open|>tools<|sep|><|open|>call tool="get_weather" index="1"<|sep|>
 *   <|open|>argument key="city" type="string"<|sep|>Tokyo<|close|>argument<|sep|>
 *   <|open|>argument key="days" type="number"<|sep|>3<|close|>argument<|sep|>
 *   <|close|>call<|sep|><|close|>tools<|sep|><|close|>message<|sep|><|end_of_msg|>
 *
 * - The generation prompt opens the think channel (`<|open|>think<|sep|>`) when thinking is on:
 *   use `startInReasoning`; `<|open|>think<|sep|>…<|close|>think<|sep|>` is reasoning.
 * - `<|open|>call tool="NAME" …<|sep|>` opens a call (identity there; attribute values unescape
 *   `&quot;` and `&amp;`). Each `<|open|>argument key="K" type="T"<|sep|>V<|close|>argument<|sep|>`
 *   is one member of the argument object: V is written raw (strings as they are, other types as
 *   JSON), typed by its `type` attribute (string, number, boolean, null, object, array; the tool
 *   schema, then the `auto` rule, for an unknown type). String values stream as they arrive.
 *   A `<|open|>json …<|sep|>{…}<|close|>json<|sep|>` block is the whole argument object, passed through.
 * - `call.complete` at `<|close|>call<|sep|>`. The template numbers calls per message (`index`), so
 *   ids are `call_<index>`.
 * Look-alikes: special tokens, recognised anywhere. The channel tags (response, tools, message) and
 * `<|end_of_msg|>` are removed; a call header without a `tool` name, or longer than 1024
 * characters, is skipped to `<|close|>call<|sep|>` (warning `parser.malformed_call`).
 */
import { MarkerSet, LeadingWs } from './core/markers';
import { ParamCallParser } from './core/paramCalls';
import type { ParamObject, ValueType } from './core/params';
import type { ParserOptions } from './types';

const SEP = '<|sep|>';
const CALL_OPEN = '<|open|>call';
const CALL_CLOSE = '<|close|>call<|sep|>';
const ARG_OPEN = '<|open|>argument';
const ARG_CLOSE = '<|close|>argument<|sep|>';
const JSON_OPEN = '<|open|>json';
const JSON_CLOSE = '<|close|>json<|sep|>';

const HEAD = 10;
const BODY = 11;
const ARG_HEAD = 12;
const VALUE = 13;
const JSON_HEAD = 14;
const JSON_BODY = 15;
const SKIP = 16;
const SKIP_ARG = 17;
const SKIP_JSON = 18;

const HEAD_CAP = 1024;
const NAME_RE = /^[A-Za-z0-9_.:/-]+$/;

const sepSet = new MarkerSet([SEP]);
const bodySet = new MarkerSet([ARG_OPEN, JSON_OPEN, CALL_CLOSE]);
const argCloseSet = new MarkerSet([ARG_CLOSE]);
const jsonCloseSet = new MarkerSet([JSON_CLOSE]);
const callCloseSet = new MarkerSet([CALL_CLOSE]);

const TYPES: Readonly<Record<string, ValueType>> = {
  string: 'string',
  number: 'number',
  integer: 'integer',
  boolean: 'boolean',
  null: 'json',
  object: 'object',
  array: 'array',
};

/** `tool="get_weather" index="1"` → { tool: 'get_weather', index: '1' }; undefined when malformed. */
export function xtmlAttrs(s: string): Record<string, string> | undefined {
  const out: Record<string, string> = {};
  const re = /\s*([A-Za-z_][A-Za-z0-9_-]*)="([^"]*)"/y;
  let at = 0;
  while (at < s.length) {
    re.lastIndex = at;
    const m = re.exec(s);
    if (m === null) return s.slice(at).trim() === '' ? out : undefined;
    out[m[1]] = m[2].replace(/&quot;/g, '"').replace(/&amp;/g, '&');
    at = re.lastIndex;
  }
  return out;
}

export class KimiK3Parser extends ParamCallParser {
  private readonly leading = new LeadingWs();
  private jsonArgs = false;

  constructor(opts: ParserOptions = {}) {
    super(
      {
        family: 'kimi-k3',
        reasoning: { open: '<|open|>think<|sep|>', close: '<|close|>think<|sep|>' },
        openers: [CALL_OPEN],
        strip: [
          '<|open|>response<|sep|>',
          '<|close|>response<|sep|>',
          '<|open|>tools<|sep|>',
          '<|close|>tools<|sep|>',
          '<|close|>message<|sep|>',
          '<|end_of_msg|>',
          CALL_CLOSE,
        ],
        plainText: false,
      },
      opts,
    );
  }

  protected onTextMarker(_m: string): void {
    this.mode = HEAD;
  }

  protected override stepFamily(): boolean {
    switch (this.mode) {
      case HEAD: {
        const r = this.readUntil(sepSet, HEAD_CAP);
        if (r === null) return false;
        const name = r === undefined ? undefined : xtmlAttrs(r.content)?.tool;
        if (name === undefined || !NAME_RE.test(name)) {
          this.warn('parser.malformed_call', 'call header without a valid tool name; skipped');
          this.mode = SKIP;
          return true;
        }
        this.confirmMarkup();
        this.startCall(name, 'none');
        this.jsonArgs = false;
        this.mode = BODY;
        return true;
      }
      case BODY: {
        const m = this.streamUntil(bodySet, () => {}, true);
        if (m === null) return false;
        if (m === ARG_OPEN) this.mode = ARG_HEAD;
        else if (m === JSON_OPEN) this.mode = JSON_HEAD;
        else {
          if (this.jsonArgs) this.params = null;
          this.endCall();
          this.afterMarkup();
        }
        return true;
      }
      case ARG_HEAD: {
        const head = this.readParamHeader(sepSet, HEAD_CAP, BODY, 'argument header too long');
        if (typeof head === 'boolean') return head;
        const attrs = xtmlAttrs(head);
        if (attrs?.key === undefined || this.jsonArgs) {
          this.warn('parser.malformed_call', 'argument without a key; skipped');
          this.mode = SKIP_ARG;
          return true;
        }
        const type = attrs.type === undefined ? undefined : TYPES[attrs.type];
        this.value = (this.params as ParamObject).open(attrs.key, type);
        this.mode = VALUE;
        return true;
      }
      case VALUE:
        return this.stepValue(argCloseSet, BODY);
      case SKIP_ARG: {
        const m = this.streamUntil(argCloseSet, () => {}, true);
        if (m === null) return false;
        this.mode = BODY;
        return true;
      }
      case JSON_HEAD: {
        const head = this.readParamHeader(sepSet, HEAD_CAP, BODY, 'json header too long');
        if (typeof head === 'boolean') return head;
        if ((this.params as ParamObject).params > 0 || this.jsonArgs) {
          this.warn('parser.malformed_call', 'a json block after other arguments; skipped');
          this.mode = SKIP_JSON;
          return true;
        }
        this.jsonArgs = true;
        this.leading.reset();
        this.mode = JSON_BODY;
        return true;
      }
      case JSON_BODY:
      case SKIP_JSON: {
        const call = this.call;
        const skip = this.mode === SKIP_JSON;
        const m = this.streamUntil(
          jsonCloseSet,
          (s) => {
            if (!skip) call?.fragment(this.leading.strip(s));
          },
          true,
        );
        if (m === null) return false;
        this.mode = BODY;
        return true;
      }
      case SKIP: {
        const m = this.streamUntil(callCloseSet, () => {});
        if (m === null) return false;
        this.afterMarkup();
        return true;
      }
    }
    return false;
  }

  protected override finishFamily(): void {
    if (this.mode === HEAD) this.warn('parser.truncated_call', 'stream ended inside a call header');
    else this.warn('parser.unclosed_call', 'stream ended inside a call; left without completion');
  }
}
