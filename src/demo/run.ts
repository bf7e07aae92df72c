import * as http from 'node:http';
import type { InspectionEvent } from 'xstate';
import type { CallPhase } from '../../machines/toolCall.machine';
import { realClock } from '../engine/clock';
import { TurnController, type TurnSummary } from '../engine/controller';
import { type AnyTool, toOpenAIChatTools, type ToolRegistry } from '../execute/tools';
import { createStreamReader } from '../wire';
import type { StreamEvent } from '../wire/events';
import { prepareSafety } from '../execute/safety';
import { executorFor } from './tools';

/**
 * One demo turn over real HTTP: POST an OpenAI chat request to the scripted model, decode the SSE
 * bytes with `createStreamReader('openai-chat')`, feed the canonical events to a `TurnController`
 * in execute mode with real tools, and keep a live view (`LiveTurn`) for the timeline: every call
 * actor state entry (from the machine's own `call.status` reports, seen through XState's
 * `inspect` hook), argument sizes, tool runs and the end of the stream. No contents are kept.
 */

export type DemoDispatch = 'streaming' | 'post-stream';

export interface LiveCall {
  index: number;
  attempt: number;
  name?: string;
  kind?: string;
  /** Current call actor state. */
  phase: CallPhase | 'opened';
  /** Every state entry, in order, with its time. */
  phases: { phase: CallPhase; t: number }[];
  openMs: number;
  completeMs?: number;
  releasedMs?: number;
  startedMs?: number;
  resultMs?: number;
  argsBytes: number;
  ok?: boolean;
  resultChars?: number;
}

export interface LiveTurn {
  dispatch: DemoDispatch;
  now: () => number;
  firstByteMs?: number;
  textChars: number;
  streamEndMs?: number;
  finish?: string;
  turnDoneMs?: number;
  calls: LiveCall[];
  error?: string;
}

export type LiveChange =
  | { kind: 'call'; call: LiveCall; phase: CallPhase; t: number }
  | { kind: 'open'; call: LiveCall; t: number }
  | { kind: 'text'; t: number; chars: number }
  | { kind: 'stream.end'; t: number; finish?: string }
  | { kind: 'done'; t: number };

export interface DemoTurnOptions {
  /** Base URL of the scripted model, e.g. http://127.0.0.1:PORT/v1 */
  url: string;
  dispatch: DemoDispatch;
  registry: ToolRegistry;
  /** Give up after this long (ms). Default 60 s. */
  timeoutMs?: number;
  /** Every change of the live view, as it happens. */
  onChange?: (turn: LiveTurn, change: LiveChange) => void;
  /** Extra inspection observer (--inspect / --inspect-log). */
  inspect?: (e: InspectionEvent) => void;
}

export interface DemoTurnResult {
  live: LiveTurn;
  summary: TurnSummary;
}

export async function runDemoTurn(opts: DemoTurnOptions): Promise<DemoTurnResult> {
  const clock = realClock();
  const kinds = new Map(opts.registry.list().map((t: AnyTool) => [t.name, t.kind as string]));
  const live: LiveTurn = { dispatch: opts.dispatch, now: () => clock.now(), textChars: 0, calls: [] };
  const change = (c: LiveChange): void => opts.onChange?.(live, c);

  const callAt = (index: number, attempt: number): LiveCall => {
    let c = live.calls[index];
    if (!c) {
      c = { index, attempt, phase: 'opened', phases: [], openMs: clock.now(), argsBytes: 0 };
      live.calls[index] = c;
      change({ kind: 'open', call: c, t: c.openMs });
    }
    return c;
  };

  await prepareSafety(opts.registry); // loads the shell parser if a tool needs it
  const { classify, runTool } = executorFor(opts.registry);
  const controller = new TurnController({
    mode: 'execute',
    clock,
    maxAttempts: 1,
    earlyStart: opts.dispatch === 'post-stream' ? 'none' : 'safe',
    classify,
    runTool,
    inspect: (e: InspectionEvent) => {
      // The call actors report each state entry to the turn (`call.status`): that is the timeline.
      if (e.type === '@xstate.event' && e.event.type === 'call.status') {
        const ev = e.event as unknown as { index: number; attempt: number; phase: CallPhase };
        const c = callAt(ev.index, ev.attempt);
        const t = clock.now();
        c.phase = ev.phase;
        c.phases.push({ phase: ev.phase, t });
        if (ev.phase === 'complete') c.completeMs ??= t;
        else if (ev.phase === 'released') {
          c.releasedMs ??= t;
          c.completeMs ??= t;
        } else if (ev.phase === 'running') c.startedMs ??= t;
        else if (ev.phase === 'resulted') c.resultMs ??= t;
        change({ kind: 'call', call: c, phase: ev.phase, t });
      }
      opts.inspect?.(e);
    },
  });
  controller.events.on('tool.result', (timing) => {
    const c = live.calls[timing.index];
    if (c && timing.result) {
      c.ok = timing.result.ok;
      c.resultChars = timing.result.content.length;
    }
  });

  const feed = (events: StreamEvent[]): void => {
    for (const ev of events) {
      const t = clock.now();
      if (ev.type === 'call.identity') {
        const c = callAt(ev.index, controller.currentAttempt);
        if (ev.name) {
          c.name = ev.name;
          c.kind = kinds.get(ev.name) ?? 'unknown';
        }
      } else if (ev.type === 'call.fragment') {
        callAt(ev.index, controller.currentAttempt).argsBytes += Buffer.byteLength(ev.text);
      } else if (ev.type === 'text.delta') {
        live.textChars += ev.text.length;
        change({ kind: 'text', t, chars: live.textChars });
      } else if (ev.type === 'finish') {
        live.finish = ev.reason;
      } else if (ev.type === 'stream.end') {
        live.streamEndMs = t;
      } else if (ev.type === 'stream.error') {
        live.error = `${ev.error.type}: ${ev.error.message}`;
      }
      if (ev.type === 'stream.end') change({ kind: 'stream.end', t, finish: live.finish });
      controller.feed(ev);
    }
  };

  const reader = createStreamReader('openai-chat');
  const body = JSON.stringify({
    model: 'sluice-scripted-demo',
    stream: true,
    stream_options: { include_usage: true },
    messages: [
      { role: 'system', content: 'You are a coding agent working in the orders-service repository.' },
      { role: 'user', content: 'Make the service reject unknown config keys.' },
    ],
    tools: toOpenAIChatTools(opts.registry.list()),
  });
  const url = new URL(opts.url.replace(/\/$/, '') + '/chat/completions');
  let ended = false;
  const endStream = (error?: string): void => {
    if (ended) return;
    ended = true;
    if (error) feed([{ type: 'stream.error', error: { type: 'api_error', message: error }, retryable: false }]);
    else feed(reader.end());
  };
  const req = http.request(url, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
    if ((res.statusCode ?? 0) >= 300) {
      res.resume();
      endStream(`the scripted model answered HTTP ${res.statusCode}`);
      return;
    }
    res.on('data', (chunk: Buffer) => {
      live.firstByteMs ??= clock.now();
      feed(reader.write(chunk));
    });
    res.on('end', () => endStream());
    res.on('error', (err) => endStream(err.message));
  });
  req.on('error', (err) => endStream(`request failed: ${err.message}`));
  req.end(body);

  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the demo turn did not finish within ${opts.timeoutMs ?? 60_000} ms`)), opts.timeoutMs ?? 60_000);
  });
  try {
    const summary = await Promise.race([controller.done, timeout]);
    live.turnDoneMs = summary.turnDoneMs;
    change({ kind: 'done', t: summary.turnDoneMs });
    return { live, summary };
  } catch (err) {
    controller.abort('drop');
    req.destroy();
    throw err;
  } finally {
    clearTimeout(timer);
  }
}
