/**
 * Time source for the engine. Real time by default; `VirtualClock` makes replays deterministic
 * (also handed to XState's `createActor({ clock })` so retry backoff runs on the same clock).
 */
export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export function realClock(origin = performance.now()): Clock {
  return {
    now: () => performance.now() - origin,
    setTimeout: (fn, ms) => setTimeout(fn, ms),
    clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
  };
}

interface Timer {
  id: number;
  at: number;
  fn: () => void;
}

/** A clock that only moves when told to. Timers fire in (time, creation) order. */
export class VirtualClock implements Clock {
  private t = 0;
  private seq = 0;
  private timers: Timer[] = [];

  now(): number {
    return this.t;
  }

  setTimeout(fn: () => void, ms: number): unknown {
    const timer = { id: ++this.seq, at: this.t + Math.max(0, ms), fn };
    // Keep sorted by (at, id); timers are few, so insertion is cheap.
    let i = this.timers.length;
    while (i > 0 && this.timers[i - 1]!.at > timer.at) i--;
    this.timers.splice(i, 0, timer);
    return timer.id;
  }

  clearTimeout(handle: unknown): void {
    const i = this.timers.findIndex((x) => x.id === handle);
    if (i >= 0) this.timers.splice(i, 1);
  }

  /** Time of the next pending timer, if any. */
  nextTimerAt(): number | undefined {
    return this.timers[0]?.at;
  }

  /** Move to `t`, firing every timer due on the way (not the ones due after). */
  advanceTo(t: number): void {
    while (this.timers.length > 0 && this.timers[0]!.at <= t) {
      const timer = this.timers.shift()!;
      this.t = Math.max(this.t, timer.at);
      timer.fn();
    }
    this.t = Math.max(this.t, t);
  }

  /** Fire only the timers due at the current time or earlier (one step). */
  fireDue(): boolean {
    const next = this.timers[0];
    if (!next || next.at > this.t) return false;
    this.timers.shift();
    next.fn();
    return true;
  }
}

/** Let pending promise reactions run (tool results resolve as microtasks). */
export function settleMicrotasks(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
