/**
 * A Python call list inside a family's own markers (LFM2 `<|tool_call_start|>[…]<|tool_call_end|>`,
 * OLMo 3 `<function_calls>…</function_calls>`), read by batch A's `PythonicParser` (pythonic.ts):
 * the text between the markers is fed to a private instance, whose calls are renumbered into the
 * family's stream. Its completion evidence (the `)` closing each call) carries over.
 *
 * Values written with `tojson` (OLMo 3: `true`/`false`/`null`) are read by `PythonicParser` itself.
 */
import type { StreamEvent } from '../wire/events';
import type { Emitter } from './core/emitter';
import { isIdentStart, PythonicParser } from './pythonic';

export interface BlockTarget {
  em: Emitter;
  text(s: string): void;
  warn(code: string, message: string): void;
}

export { isIdentStart };

export class PythonicBlock {
  private readonly sub = new PythonicParser();
  private readonly indices = new Map<number, number>();

  constructor(private readonly t: BlockTarget) {}

  push(s: string): void {
    this.relay(this.sub.push(s));
  }

  /** The block's closing marker: `suffix` (a `]` the markers imply) and the end of the list. */
  close(suffix = ''): void {
    if (suffix !== '') this.relay(this.sub.push(suffix));
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
