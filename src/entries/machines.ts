/**
 * `sluice/machines`: the XState v5 machines `runTurn` drives (one actor per tool call, one per
 * turn) and the pure decision functions they use (release order, early starts). For inspection
 * tooling, visualisers and your own controllers; `TurnController` (from `sluice`) runs them.
 * See docs/architecture.md and the generated statecharts in visualizations/.
 */
/// <reference types="node" preserve="true" />
export { toolCallMachine } from '../../machines/toolCall.machine';
export type { ToolCallContext, ToolCallEvent, ToolCallInput, ToolCallMachine, CallStatusEvent } from '../../machines/toolCall.machine';
export { turnMachine } from '../../machines/turn.machine';
export type { AbortMode, CallView, EndCompletion, TurnActorRef, TurnContext, TurnEmitted, TurnEvent, TurnInput, TurnMachine, TurnMode, TurnOutcome, TurnSettings } from '../../machines/turn.machine';
export { decideReleases } from '../release/rules';
export type { ReleaseContext, ReleaseDecision, ReleaseView } from '../release/rules';
export { decideStarts } from '../execute/schedule';
export type { Approval, EarlyStart, StartContext, StartDecision, StartView } from '../execute/schedule';
