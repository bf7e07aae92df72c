/**
 * What every fault point must show after `resumeTurn` (the properties): no invariant
 * violation, no unsafe call executed twice (the `bump` counter file and the run log), every call
 * of the turn exactly one result, and every result the journal recorded before the fault kept
 * verbatim and not run again.
 */
import type { ResumeTurnResult } from '../../src/engine/resume';
import type { JournalRecord } from '../../src/journal/records';
import { lines } from '../journal/workspaceTools';

type Result = Extract<JournalRecord, { k: 'result' }>;
type Released = Extract<JournalRecord, { k: 'released' }>;

export interface FaultTally {
  points: number;
  recordedResults: number;
  kept: number;
  rerun: number;
  unknownOutcome: number;
  reconciled: number;
  unsafeTwice: number;
  violations: number;
  callsWithoutOneResult: number;
}

export const emptyTally = (): FaultTally => ({ points: 0, recordedResults: 0, kept: 0, rerun: 0, unknownOutcome: 0, reconciled: 0, unsafeTwice: 0, violations: 0, callsWithoutOneResult: 0 });

/** The journal before the resume and the run log then; call after `resumeTurn` with its result. */
export function checkResumed(dir: string, before: readonly JournalRecord[], runsBefore: string[], out: ResumeTurnResult, tally: FaultTally): void {
  tally.points++;
  tally.violations += out.violations.length;
  expect(out.violations).toEqual([]);
  // No unsafe call twice: each bump's call id at most once in the counter file and in the run log.
  const counter = lines(dir, 'counter.txt');
  const bumps = lines(dir, 'runs.log').filter((l) => l.startsWith('bump '));
  const twice = counter.length - new Set(counter).size + (bumps.length - new Set(bumps).size);
  tally.unsafeTwice += twice;
  expect(twice).toBe(0);
  // Every call exactly one result.
  const assistant = out.messages.find((m) => m.role === 'assistant');
  const tool = out.messages.find((m) => m.role === 'tool');
  const ids = assistant && assistant.role === 'assistant' ? assistant.calls.map((c) => c.id) : [];
  const results = tool && tool.role === 'tool' ? tool.results.map((r) => r.callId) : [];
  const bad = ids.filter((id) => results.filter((r) => r === id).length !== 1).length + results.filter((r) => !ids.includes(r)).length;
  tally.callsWithoutOneResult += bad;
  expect(bad).toBe(0);
  // Recorded results kept verbatim, not run again.
  const recorded = before.filter((r): r is Result => r.k === 'result');
  const released = new Map(before.filter((r): r is Released => r.k === 'released').map((r) => [`${r.a}:${r.i}`, r]));
  tally.recordedResults += recorded.length;
  const runsAfter = lines(dir, 'runs.log');
  for (const r of recorded) {
    const id = released.get(`${r.a}:${r.i}`)?.id ?? '';
    const got = tool && tool.role === 'tool' ? tool.results.find((x) => x.callId === id) : undefined;
    expect(got?.content).toBe(r.content);
    expect(runsAfter.filter((l) => l.endsWith(` ${id}`))).toEqual(runsBefore.filter((l) => l.endsWith(` ${id}`)));
  }
  for (const c of out.resumed) {
    if (c.resumed === 'kept') tally.kept++;
    else if (c.resumed === 'rerun') tally.rerun++;
    else if (c.resumed === 'unknown-outcome') tally.unknownOutcome++;
    else tally.reconciled++;
  }
}
