import { TurnController } from '../../src/engine/controller';
import type { OutputEvent } from '../../src/release/output';
import { done, end, finish, frag, id, kinds, text } from './helpers';

/**
 * The turn's lifecycle lives in the turn machine's states (`streaming.open`, `streaming.finished`,
 * `draining`, `backoff`, `done`), and the controller reads it from there: these check what an
 * embedder sees of each boundary, including a listener that feeds the controller again while the
 * turn is still taking the end.
 */

function stateOf(c: TurnController): string {
  const v = c.actor.getSnapshot().value;
  return typeof v === 'string' ? v : Object.entries(v).map(([k, s]) => `${k}.${String(s)}`).join();
}

function record(c: TurnController): string[] {
  const seen: string[] = [];
  c.events.on('output', (e: OutputEvent) => seen.push(e.type === 'tool_use' ? `tool_use:${e.index}` : e.type));
  c.events.on('turn.done', (s) => seen.push(`turn.done:${s.outcome}`));
  return seen;
}

test('the finish and the end are states of the turn, read by the controller', () => {
  const c = new TurnController({ format: 'anthropic' });
  expect(stateOf(c)).toBe('streaming.open');
  c.feed(id(0, 'c0', 'read'));
  c.feed(frag(0, '{"a":1}'));
  c.feed({ type: 'finish', reason: 'tool_calls' });
  expect(stateOf(c)).toBe('streaming.finished');
  expect(c.attemptOpen).toBe(true);
  c.feed(end);
  expect(stateOf(c)).toBe('done');
  expect(c.attemptOpen).toBe(false);
});

test('the calls completed at the end release before the output ends, and the output ends before turn.done', async () => {
  // Evidence-only: nothing completes before the finish, so both calls are judged with the end.
  const c = new TurnController({ format: 'anthropic' });
  const seen = record(c);
  c.feed(id(0, 'c0', 'read'));
  c.feed(frag(0, '{"a":1}'));
  c.feed(id(2, 'c2', 'read'));
  c.feed(frag(2, '{"b":2}'));
  c.feed(text('after'));
  c.feed(id(3, 'c3', 'read'));
  c.feed(frag(3, '{"c":'));
  c.feed({ type: 'finish', reason: 'tool_calls' });
  c.feed(end);
  const summary = await c.done;
  expect(seen).toEqual(['tool_use:0', 'tool_use:2', 'text', 'end', 'turn.done:done']);
  expect(summary.calls.map((t) => t.state)).toEqual(['released', 'released', 'invalid']);
  expect(summary.finish).toBe('tool_calls');
});

test('a listener that feeds the end again while the turn takes it changes nothing', async () => {
  const c = new TurnController({ format: 'anthropic' });
  const seen = record(c);
  let fedAgain = 0;
  c.events.on('output', (e) => {
    if (e.type === 'tool_use') {
      fedAgain++;
      c.feed(end);
    }
  });
  c.feed(id(0, 'c0', 'read'));
  c.feed(frag(0, '{"a":1}'));
  c.feed(finish());
  c.feed(end);
  const summary = await c.done;
  c.feed(text('late')); // after the end: not read
  expect(fedAgain).toBe(1);
  expect(seen).toEqual(['tool_use:0', 'end', 'turn.done:done']);
  expect(summary.trace.filter((e) => e.kind === 'stream.end')).toHaveLength(1);
});

test('an end without the finish is the turn\'s stream_truncated: one error, the calls never released', async () => {
  const c = new TurnController({ format: 'anthropic' });
  const seen = record(c);
  const errors: OutputEvent[] = [];
  c.events.on('output', (e) => e.type === 'error' && errors.push(e));
  c.feed(id(0, 'c0', 'read'));
  c.feed(frag(0, '{"a":1}'));
  c.feed(done(0));
  c.feed(end);
  const summary = await c.done;
  // The call was released at its evidence; the turn then failed: the gateway's client gets the error.
  expect(kinds(errors)).toEqual(['error']);
  expect(seen).toEqual(['tool_use:0', 'error', 'turn.done:failed']);
  expect(summary.outcome).toBe('failed');
  expect(summary.error?.type).toBe('stream_truncated');
  expect(summary.finish).toBeUndefined();
  expect(summary.trace.some((e) => e.kind === 'stream.end')).toBe(false);
});

test('a retried attempt starts open again: its end needs its own finish', async () => {
  const c = new TurnController({ format: 'anthropic', mode: 'execute', maxAttempts: 2, retryBaseMs: 0, retryJitter: 'none', runTool: async () => ({ ok: true, content: 'x' }) });
  c.feed(finish());
  expect(stateOf(c)).toBe('streaming.finished');
  c.feed({ type: 'stream.error', error: { type: 'overloaded_error', message: 'busy' }, retryable: true });
  expect(stateOf(c)).toBe('backoff');
  await new Promise((r) => setTimeout(r, 5));
  expect(stateOf(c)).toBe('streaming.open');
  c.feed(text('hi'));
  c.feed(end);
  const summary = await c.done;
  expect(summary.attempts).toBe(2);
  expect(summary.outcome).toBe('failed');
  expect(summary.error?.type).toBe('stream_truncated');
});
