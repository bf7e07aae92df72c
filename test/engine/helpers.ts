import { type ControllerOptions, TurnController } from '../../src/engine/controller';
import type { OutputEvent } from '../../src/release/output';
import type { StreamEvent } from '../../src/wire/events';

/** Feed events one by one; record the output produced after each step. */
export function drive(events: StreamEvent[], opts: ControllerOptions = {}) {
  const c = new TurnController(opts);
  const out: OutputEvent[] = [];
  const steps: OutputEvent[][] = [];
  const warnings: string[] = [];
  c.events.on('output', (e) => out.push(e));
  c.events.on('warning', (w) => warnings.push(w.code));
  for (const e of events) {
    const before = out.length;
    c.feed(e);
    steps.push(out.slice(before));
  }
  return { c, out, steps, warnings };
}

export const id = (index: number, id: string, name: string): StreamEvent => ({ type: 'call.identity', index, id, name });
export const frag = (index: number, text: string): StreamEvent => ({ type: 'call.fragment', index, text });
export const done = (index: number): StreamEvent => ({ type: 'call.complete', index });
export const text = (t: string): StreamEvent => ({ type: 'text.delta', text: t });
export const finish = (reason: 'stop' | 'tool_calls' | 'length' = 'tool_calls'): StreamEvent => ({ type: 'finish', reason });
export const end: StreamEvent = { type: 'stream.end' };

export function kinds(out: OutputEvent[]): string[] {
  return out.map((e) => (e.type === 'tool_use' ? `tool_use:${e.index}` : e.type));
}
