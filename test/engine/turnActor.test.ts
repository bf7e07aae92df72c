import { createActor } from 'xstate';
import { completeCall, type TurnEmitted, type TurnSettings, turnMachine } from '../../machines/turn.machine';

/**
 * The turn machine on its own (`sluice/machines`): without `settings.notify` it emits what it
 * tells its embedder (`actor.on`); with it, the same events go to `notify`, in the same order,
 * and none is emitted.
 */
const settings = (notify?: (e: TurnEmitted) => void): TurnSettings => ({
  mode: 'gateway',
  singleTool: false,
  maxAttempts: 1,
  retryBaseMs: 0,
  earlyStart: 'safe',
  maxConcurrent: 10,
  onAbort: 'commit',
  classify: () => ({ safe: true, needsApproval: false }),
  ...(notify ? { notify } : {}),
});

function run(notify?: (e: TurnEmitted) => void): string[] {
  const emitted: string[] = [];
  const a = createActor(turnMachine, { input: { settings: settings(notify) } });
  a.on('*', (e) => emitted.push(e.type));
  a.start();
  a.send({ type: 'call.open', index: 0, id: 'c0', name: 'read_file' });
  a.send({ type: 'call.open', index: 1, id: 'c1', name: 'read_file' });
  completeCall(a, { type: 'call.complete', index: 1, outcome: 'object', input: { a: 1 } });
  completeCall(a, { type: 'call.complete', index: 0, outcome: 'object', input: { a: 0 } });
  a.send({ type: 'stream.end' });
  expect(a.getSnapshot().status).toBe('done');
  return emitted;
}

const EXPECTED = ['call.ready', 'call.ready', 'call.released', 'call.released', 'turn.done'];

test('without notify the turn emits its events', () => {
  expect(run()).toEqual(EXPECTED);
});

test('with notify the same events go to it in order, and nothing is emitted', () => {
  const told: TurnEmitted[] = [];
  expect(run((e) => told.push(e))).toEqual([]);
  expect(told.map((e) => e.type)).toEqual(EXPECTED);
  expect(told.filter((e) => e.type === 'call.released').map((e) => (e as { index: number }).index)).toEqual([0, 1]);
});
