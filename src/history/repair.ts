/**
 * History repair (SPEC §6.11): make any stored history satisfy I1–I3, e.g. on resume after a
 * crash. Never throws; never mutates its input; idempotent (a repaired history is returned
 * unchanged, with no changes, by a second run).
 *
 * What it does, per assistant message with calls:
 * - the results are gathered from the tool message(s) right after it (several consecutive tool
 *   messages are merged into one);
 * - a call without a result gets a synthetic error result (`synthetic: 'repaired'`) — also when
 *   the history ends with that assistant message;
 * - a second result for the same call is dropped (the first one is kept);
 * - results are put in call order; a result's name is set to its call's name;
 * - a result for an id not called by that assistant message is dropped;
 * - a second call with an id already used in the same message is dropped (providers reject
 *   duplicate ids, and its result could not be told apart).
 * Elsewhere: a tool message that does not follow an assistant message with calls is dropped
 * (its results are orphans), and malformed entries (no known role) are dropped.
 *
 * `changes` describes each change with positions, ids and names only.
 */
import { callsOf } from './check';
import type { HistoryMessage, ToolCallRecord, ToolResultRecord } from './types';

export const REPAIRED_RESULT_TEXT = 'No result was recorded for this tool call (the conversation history was repaired).';

export interface RepairResult {
  messages: HistoryMessage[];
  changes: string[];
}

type Tool = Extract<HistoryMessage, { role: 'tool' }>;

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function resultsOf(m: unknown): ToolResultRecord[] {
  if (!isObj(m) || m.role !== 'tool' || !Array.isArray(m.results)) return [];
  return (m.results as unknown[]).filter((r): r is ToolResultRecord => isObj(r) && typeof r.callId === 'string');
}

function copyResult(r: ToolResultRecord, name: string): ToolResultRecord {
  const out: ToolResultRecord = { callId: r.callId, name, ok: r.ok === true, content: typeof r.content === 'string' ? r.content : String(r.content ?? '') };
  if (r.synthetic) out.synthetic = r.synthetic;
  return out;
}

export function repairHistory(messages: readonly unknown[]): RepairResult {
  const out: HistoryMessage[] = [];
  const changes: string[] = [];
  const list = Array.isArray(messages) ? messages : [];
  if (!Array.isArray(messages)) changes.push('history was not an array; returned empty');

  let i = 0;
  while (i < list.length) {
    const m = list[i];
    const role = isObj(m) ? m.role : undefined;

    if (role === 'user') {
      out.push({ ...(m as Extract<HistoryMessage, { role: 'user' }>) });
      i++;
      continue;
    }
    if (role === 'tool') {
      changes.push(`message ${i}: removed tool message with ${resultsOf(m).length} result(s) that follows no call`);
      i++;
      continue;
    }
    if (role !== 'assistant') {
      changes.push(`message ${i}: removed malformed message`);
      i++;
      continue;
    }

    const a = m as Extract<HistoryMessage, { role: 'assistant' }>;
    if (!Array.isArray(a.calls)) changes.push(`message ${i}: assistant message without a calls array; added an empty one`);
    const rawCalls = Array.isArray(a.calls) ? a.calls : [];
    const valid = callsOf(a);
    if (valid.length !== rawCalls.length) changes.push(`message ${i}: removed ${rawCalls.length - valid.length} malformed call(s)`);
    const calls: ToolCallRecord[] = [];
    const ids = new Set<string>();
    for (const c of valid) {
      if (ids.has(c.id)) {
        changes.push(`message ${i}: removed duplicate call id ${c.id} (${c.name})`);
        continue;
      }
      ids.add(c.id);
      calls.push(c);
    }
    const assistant: HistoryMessage = { ...a, calls: calls.map((c) => ({ ...c })) };
    out.push(assistant);
    i++;
    if (calls.length === 0) {
      // Results after an assistant message without calls are orphans; the tool branch drops them.
      continue;
    }

    // Gather the results from every consecutive tool message after it.
    const gathered: ToolResultRecord[] = [];
    const from = i;
    while (i < list.length && isObj(list[i]) && (list[i] as { role?: unknown }).role === 'tool') {
      gathered.push(...resultsOf(list[i]));
      const malformed = (Array.isArray((list[i] as Tool).results) ? (list[i] as Tool).results.length : 0) - resultsOf(list[i]).length;
      if (malformed > 0) changes.push(`message ${i}: removed ${malformed} malformed result(s)`);
      i++;
    }
    if (i - from > 1) changes.push(`messages ${from}-${i - 1}: merged ${i - from} tool messages`);

    const results: ToolResultRecord[] = [];
    const firstBy = new Map<string, ToolResultRecord>();
    for (const r of gathered) {
      if (!ids.has(r.callId)) {
        changes.push(`message ${from}: removed result for ${r.callId}, which message ${from - 1} does not call`);
        continue;
      }
      if (firstBy.has(r.callId)) {
        changes.push(`message ${from}: removed duplicate result for ${r.callId}`);
        continue;
      }
      firstBy.set(r.callId, r);
    }
    let reordered = false;
    let lastPos = -1;
    const orderOf = new Map(calls.map((c, k) => [c.id, k]));
    for (const r of firstBy.values()) {
      const pos = orderOf.get(r.callId) as number;
      if (pos < lastPos) reordered = true;
      lastPos = pos;
    }
    if (reordered) changes.push(`message ${from}: put results in call order`);
    for (const c of calls) {
      const r = firstBy.get(c.id);
      if (r) {
        if (r.name !== c.name) changes.push(`message ${from}: result for ${c.id} renamed to its call's name ${c.name}`);
        results.push(copyResult(r, c.name));
      } else {
        changes.push(`message ${from - 1}: added a synthetic error result for call ${c.id} (${c.name})`);
        results.push({ callId: c.id, name: c.name, ok: false, content: REPAIRED_RESULT_TEXT, synthetic: 'repaired' });
      }
    }
    out.push({ role: 'tool', results });
  }
  return { messages: out, changes };
}
