/**
 * A Python call list inside a family's own markers (LFM2 `<|tool_call_start|>[…]<|tool_call_end|>`,
 * OLMo 3 `<function_calls>…</function_calls>`), read by batch A's `PythonicParser` (pythonic.ts):
 * the text between the markers is fed to a private instance, whose calls are renumbered into the
 * family's stream. Its completion evidence (the `)` closing each call) carries over.
 *
 * `JsonLiterals` translates `true`/`false`/`null` written outside strings to `True`/`False`/`None`
 * on the way in, for templates that write values with `tojson` (OLMo 3): `PythonicParser` reads
 * other bare words as strings.
 */
import type { StreamEvent } from '../wire/events';
import type { Emitter } from './core/emitter';
import { PythonicParser } from './pythonic';

export interface BlockTarget {
  em: Emitter;
  text(s: string): void;
  warn(code: string, message: string): void;
}

const PY_NAMES: Readonly<Record<string, string>> = { true: 'True', false: 'False', null: 'None' };

/** A character that can start a Python name. */
export const isIdentStart = (c: number): boolean => (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;
const isIdent = (c: number): boolean => isIdentStart(c) || (c >= 48 && c <= 57);

/** Streaming `true`/`false`/`null` → `True`/`False`/`None` outside quoted strings (O(1) per character). */
export class JsonLiterals {
  private quote = 0;
  private esc = false;
  /** An identifier run cut by the end of a piece (at most a few characters of a name). */
  private word = '';

  push(s: string): string {
    let out = '';
    let from = 0;
    let i = 0;
    if (this.word !== '') {
      while (i < s.length && isIdent(s.charCodeAt(i))) i++;
      if (i === s.length) {
        this.word += s;
        return '';
      }
      out = this.map(this.word + s.slice(0, i));
      this.word = '';
      from = i;
    }
    for (; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (this.quote !== 0) {
        if (this.esc) this.esc = false;
        else if (c === 92 /* \ */) this.esc = true;
        else if (c === this.quote) this.quote = 0;
        continue;
      }
      if (c === 34 || c === 39) {
        this.quote = c;
        continue;
      }
      if (!isIdentStart(c)) continue;
      let j = i + 1;
      while (j < s.length && isIdent(s.charCodeAt(j))) j++;
      out += s.slice(from, i);
      if (j === s.length) {
        this.word = s.slice(i);
        return out;
      }
      out += this.map(s.slice(i, j));
      from = j;
      i = j - 1;
    }
    return out + s.slice(from);
  }

  end(): string {
    const w = this.word;
    this.word = '';
    return w === '' ? '' : this.map(w);
  }

  private map(w: string): string {
    return PY_NAMES[w] ?? w;
  }
}

export class PythonicBlock {
  private readonly sub = new PythonicParser();
  private readonly indices = new Map<number, number>();

  constructor(
    private readonly t: BlockTarget,
    private readonly literals: JsonLiterals | null = null,
  ) {}

  push(s: string): void {
    this.relay(this.sub.push(this.literals === null ? s : this.literals.push(s)));
  }

  /** The block's closing marker: `suffix` (a `]` the markers imply) and the end of the list. */
  close(suffix = ''): void {
    const rest = (this.literals?.end() ?? '') + suffix;
    if (rest !== '') this.relay(this.sub.push(rest));
    this.relay(this.sub.end());
  }

  /**
   * The stream ended inside the block. Text the reader flushes then is a cut list head (`[rea`),
   * not prose: it is dropped. Returns whether there was some.
   */
  cut(): boolean {
    const evs = this.sub.end();
    this.relay(evs.filter((e) => e.type !== 'text.delta'));
    return evs.some((e) => e.type === 'text.delta');
  }

  private relay(evs: StreamEvent[]): void {
    const em = this.t.em;
    for (const e of evs) {
      switch (e.type) {
        case 'text.delta':
          this.t.text(e.text);
          break;
        case 'call.identity': {
          const i = this.index(e.index);
          em.identity(i, `call_${i}`, e.name);
          break;
        }
        case 'call.fragment':
          em.fragment(this.index(e.index), e.text);
          break;
        case 'call.complete':
          em.complete(this.index(e.index));
          break;
        case 'warning':
          this.t.warn(e.code, e.message.replace(/^pythonic: /, ''));
          break;
        default:
          em.event(e);
      }
    }
  }

  private index(sub: number): number {
    let i = this.indices.get(sub);
    if (i === undefined) {
      i = this.t.em.newCall();
      this.indices.set(sub, i);
    }
    return i;
  }
}
