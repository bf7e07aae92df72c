import type { StreamEvent } from '../../wire/events';

const NONE = 0;
const TEXT = 1;
const THINKING = 2;
const FRAGMENT = 3;

/**
 * Collects the events of one `push`/`end`. Adjacent text, thinking and same-call fragment pieces
 * are merged into one event, so a push costs O(pieces) string appends and a handful of events.
 * Calls get their index at their first event (a markup block that never produced an event does
 * not consume an index).
 */
export class Emitter {
  private out: StreamEvent[] = [];
  private kind = NONE;
  private idx = -1;
  private acc = '';
  private nextIndex = 0;
  /** Number of calls that produced at least one event. */
  get callCount(): number {
    return this.nextIndex;
  }

  newCall(): number {
    return this.nextIndex++;
  }

  text(s: string): void {
    if (s.length === 0) return;
    if (this.kind !== TEXT) this.flush(TEXT, -1);
    this.acc += s;
  }

  thinking(s: string): void {
    if (s.length === 0) return;
    if (this.kind !== THINKING) this.flush(THINKING, -1);
    this.acc += s;
  }

  fragment(index: number, s: string): void {
    if (s.length === 0) return;
    if (this.kind !== FRAGMENT || this.idx !== index) this.flush(FRAGMENT, index);
    this.acc += s;
  }

  identity(index: number, id: string | undefined, name: string | undefined): void {
    const ev: StreamEvent & { type: 'call.identity' } = { type: 'call.identity', index };
    if (id) ev.id = id;
    if (name) ev.name = name;
    this.event(ev);
  }

  complete(index: number): void {
    this.event({ type: 'call.complete', index });
  }

  warning(code: string, message: string): void {
    this.event({ type: 'warning', code, message });
  }

  event(ev: StreamEvent): void {
    this.flush(NONE, -1);
    this.out.push(ev);
  }

  take(): StreamEvent[] {
    this.flush(NONE, -1);
    const out = this.out;
    this.out = [];
    return out;
  }

  private flush(kind: number, idx: number): void {
    if (this.acc.length > 0) {
      if (this.kind === TEXT) this.out.push({ type: 'text.delta', text: this.acc });
      else if (this.kind === THINKING) this.out.push({ type: 'thinking.delta', text: this.acc });
      else if (this.kind === FRAGMENT)
        this.out.push({ type: 'call.fragment', index: this.idx, text: this.acc });
    }
    this.acc = '';
    this.kind = kind;
    this.idx = idx;
  }
}

/**
 * One call being read. Its index is taken at its first event, so markup that produced nothing
 * (e.g. `{}` with no name) consumes no index and gets no `call.complete`.
 */
export class CallSlot {
  index = -1;

  constructor(
    private readonly em: Emitter,
    /** Id given by the model (Kimi); otherwise `call_<index>` is minted. */
    private readonly givenId?: string,
  ) {}

  get exists(): boolean {
    return this.index >= 0;
  }

  ensure(): number {
    if (this.index < 0) this.index = this.em.newCall();
    return this.index;
  }

  identity(name: string | undefined): void {
    const i = this.ensure();
    this.em.identity(i, this.givenId ?? `call_${i}`, name);
  }

  /** The name alone, when the id comes later (Mistral's `"id"` member follows the arguments). */
  named(name: string): void {
    this.em.identity(this.ensure(), undefined, name);
  }

  /** The id alone, after `named`: the model's own, else `call_<index>`. Nothing for a call without events. */
  identify(id: string | undefined): void {
    if (this.index < 0) return;
    this.em.identity(this.index, id ?? this.givenId ?? `call_${this.index}`, undefined);
  }

  fragment(s: string): void {
    if (s.length === 0) return;
    this.em.fragment(this.ensure(), s);
  }

  /** Completion evidence; false when the call never produced an event (nothing to complete). */
  complete(): boolean {
    if (this.index < 0) return false;
    this.em.complete(this.index);
    return true;
  }
}
