import type { TurnTraceEntry } from '../history/trace';
import type { HistoryMessage, InvariantViolation } from '../history/types';

export function checkTurn(_history: HistoryMessage[], _trace: TurnTraceEntry[]): InvariantViolation[] {
  return [];
}
