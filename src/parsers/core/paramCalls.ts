/**
 * Shared state and steps of the families whose calls carry XML-ish parameters (Qwen3-Coder
 * `<parameter=k>`, GLM `<arg_key>/<arg_value>`, DSML `<parameter name=…>`): the call, its
 * argument object built by `ParamObject`, and the parameter value being read.
 */
import type { ParserOptions } from '../types';
import { BaseParser, type BaseSpec } from './base';
import { CallSlot } from './emitter';
import type { MarkerSet } from './markers';
import { ParamObject, ToolSchemas, type Trim, type TypingOptions, type ValueSink } from './params';

export abstract class ParamCallParser extends BaseParser {
  protected readonly schemas: ToolSchemas;
  protected call: CallSlot | null = null;
  protected params: ParamObject | null = null;
  protected value: ValueSink | null = null;

  constructor(spec: BaseSpec, opts: ParserOptions = {}) {
    super(spec, opts);
    this.schemas = new ToolSchemas(opts.tools);
  }

  /**
   * A call starts: identity when `name` is non-empty; arguments typed by the tool schema, `auto`
   * without one, with the family's `trim` and typing repairs (`opts`).
   */
  protected startCall(name: string, trim: Trim, opts: TypingOptions = {}): CallSlot {
    const call = new CallSlot(this.em);
    this.call = call;
    if (name) call.identity(name);
    this.params = new ParamObject((s) => call.fragment(s), this.schemas, name, 'auto', trim, opts);
    return call;
  }

  /**
   * Bounded read of a parameter header up to `set`: its text, or the step result (false: more
   * input needed; true: no end within `cap` characters, warned with `message`, mode `body`).
   */
  protected readParamHeader(set: MarkerSet, cap: number, body: number, message: string): string | boolean {
    const r = this.readUntil(set, cap);
    if (r === null) return false;
    if (r === undefined) {
      this.warn('parser.malformed_call', message);
      this.mode = body;
      return true;
    }
    return r.content;
  }

  /** Streams the open parameter value up to its closing marker (`set`), then mode `next`. */
  protected stepValue(set: MarkerSet, next: number): boolean {
    const sink = this.value as ValueSink;
    const m = this.streamUntil(set, (s) => sink.push(s), true);
    if (m === null) return false;
    this.params?.closeValue();
    this.value = null;
    this.mode = next;
    return true;
  }

  /** The call closes: `}` and `call.complete`. */
  protected endCall(): void {
    this.params?.close();
    this.call?.complete();
    this.call = null;
    this.params = null;
    this.value = null;
  }
}
