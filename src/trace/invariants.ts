import { checkHistory, checkTrace } from '../history/check';
import type { EarlyStartPolicy, TurnTraceEntry } from '../history/trace';
import type { HistoryMessage, InvariantViolation } from '../history/types';

/** SPEC §7 on one finished turn: I1–I3 on the messages it appends, I4–I6 on its lifecycle trace. */
export function checkTurn(
  history: readonly HistoryMessage[],
  trace: readonly TurnTraceEntry[],
  earlyStart: EarlyStartPolicy = 'safe',
): InvariantViolation[] {
  return [...checkHistory(history).violations, ...checkTrace(trace, { earlyStart }).violations];
}
