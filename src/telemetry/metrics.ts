import type { Counter, Histogram, Meter } from '@opentelemetry/api';
import * as N from './names';

/** The turn's instruments (names and labels: src/telemetry/names.ts, docs/observability.md). */
export interface TurnInstruments {
  duration: Histogram;
  headStart: Histogram;
  releaseLag: Histogram;
  starts: Counter;
  synthetic: Counter;
  violations: Counter;
  turns: Counter;
  turnDuration: Histogram;
  shadowSaved: Histogram;
  saved: Histogram;
  tokens: Counter;
}

/** Seconds: tool runs and head starts span milliseconds to minutes. */
const SECONDS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];

const cache = new WeakMap<Meter, TurnInstruments>();

export function instrumentsFor(meter: Meter): TurnInstruments {
  const hit = cache.get(meter);
  if (hit !== undefined) return hit;
  const seconds = (name: string, description: string) =>
    meter.createHistogram(name, { unit: 's', description, advice: { explicitBucketBoundaries: SECONDS } });
  const made: TurnInstruments = {
    duration: seconds(N.METRIC_EXECUTE_TOOL_DURATION, 'Duration of one tool run'),
    headStart: seconds(N.METRIC_HEAD_START, 'Stream end minus result time per executed call (0 when the result came after the stream ended)'),
    releaseLag: seconds(N.METRIC_RELEASE_LAG, 'Release minus completion per released call'),
    starts: meter.createCounter(N.METRIC_TOOL_STARTS, { unit: '{call}', description: 'Tool runs by whether they started before the stream ended' }),
    synthetic: meter.createCounter(N.METRIC_SYNTHETIC_RESULTS, { unit: '{result}', description: 'Results sluice made up, by reason' }),
    violations: meter.createCounter(N.METRIC_INVARIANT_VIOLATIONS, {
      unit: '{violation}',
      description: "History invariant violations checkHistory/checkTrace found in a turn's own output (must stay 0)",
    }),
    turns: meter.createCounter(N.METRIC_TURNS, { unit: '{turn}', description: 'Turns by outcome' }),
    turnDuration: seconds(N.METRIC_TURN_DURATION, 'runTurn call to turn done'),
    shadowSaved: seconds(N.METRIC_SHADOW_SAVED, "Shadow mode: turn time earlyStart 'safe' would have saved"),
    saved: seconds(N.METRIC_SAVED, 'Early start on: turn time saved against post-stream dispatch (estimated from the real tool durations)'),
    tokens: meter.createCounter(N.METRIC_TOKENS, { unit: '{token}', description: 'Tokens the stream reported, by gen_ai.token.type' }),
  };
  cache.set(meter, made);
  return made;
}
