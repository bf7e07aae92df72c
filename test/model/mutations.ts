import { enqueueActions } from 'xstate';
import type * as TurnModule from '../../machines/turn.machine';
import type * as RulesModule from '../../src/release/rules';
import type * as ScheduleModule from '../../src/execute/schedule';

/**
 * Seeded bugs for the mutation check, switched on only by tests (no production code changes).
 *
 * A test file installs the wrappers with
 *   jest.mock('../../src/release/rules', () => require('./mutations').mockRules());
 *   jest.mock('../../src/execute/schedule', () => require('./mutations').mockSchedule());
 *   jest.mock('../../machines/turn.machine', () => require('./mutations').mockTurnMachine());
 * and sets `mutation.active`. With no active mutation every wrapper behaves exactly like the
 * real module (the real function or the real named action/guard is called).
 */

export const MUTATIONS = {
  'discard-keeps-running':
    'retry/drop/failure leaves in-flight tools running (discardAttempt skips running calls: no call.discard, no stopChild), so their late result is appended for a discarded attempt',
  'unsafe-early': 'an unsafe tool may start before the stream ends (decideStarts is told the stream ended)',
  'barrier-skipped': 'the ordered-prefix barrier is skipped (decideReleases releases every ready call, earlier pending ones or not)',
  'approval-skipped': 'a call that needs approval is treated as approved (decideStarts sees unrequested/pending as granted)',
  'retry-off-by-one': 'canRetry uses <= maxAttempts (one retry too many)',
  'stale-report-accepted':
    'currentAttempt / actionableReport ignore the attempt number, so a report or end from a discarded attempt\'s call actor would be recorded',
} as const;

export type MutationId = keyof typeof MUTATIONS;

export const mutation: { active?: MutationId } = {};

type Rules = typeof RulesModule;
type Schedule = typeof ScheduleModule;
type Turn = typeof TurnModule;

export function mockRules(): Rules {
  const real = jest.requireActual<Rules>('../../src/release/rules');
  return {
    ...real,
    decideReleases: (calls, frontier, ctx) => {
      if (mutation.active !== 'barrier-skipped') return real.decideReleases(calls, frontier, ctx);
      // The bug: every ready call from the frontier on is released; the frontier still stops at
      // the first call that does not pass the barrier.
      const release: number[] = [];
      const suppress: number[] = [];
      let released = ctx.released;
      for (let i = frontier; i < calls.length; i++) {
        const v = calls[i];
        if (v === undefined || v.phase !== 'emittable' || v.suppressed) continue;
        if (ctx.singleTool && released >= 1) suppress.push(i);
        else {
          release.push(i);
          released++;
        }
      }
      let f = frontier;
      while (f < calls.length && (release.includes(f) || suppress.includes(f) || real.passesBarrier(calls[f]))) f++;
      return { release, suppress, frontier: f };
    },
  };
}

export function mockSchedule(): Schedule {
  const real = jest.requireActual<Schedule>('../../src/execute/schedule');
  return {
    ...real,
    decideStarts: (calls, frontier, ctx) => {
      if (mutation.active === 'unsafe-early') return real.decideStarts(calls, frontier, { ...ctx, streamEnded: true });
      if (mutation.active === 'approval-skipped') {
        const views = calls.map((v) =>
          v && (v.approval === 'unrequested' || v.approval === 'pending') ? { ...v, approval: 'granted' as const } : v,
        );
        return real.decideStarts(views, frontier, ctx);
      }
      return real.decideStarts(calls, frontier, ctx);
    },
  };
}

export function mockTurnMachine(): Turn {
  const real = jest.requireActual<Turn>('../../machines/turn.machine');
  const impl = real.turnMachine.implementations;
  const realDiscard = impl.actions.discardAttempt!;
  const realCanRetry = impl.guards.canRetry as (args: unknown, params: unknown) => boolean;
  const realCurrentAttempt = impl.guards.currentAttempt as (args: unknown, params: unknown) => boolean;
  const realActionableReport = impl.guards.actionableReport as (args: unknown, params: unknown) => boolean;
  const turnMachine = real.turnMachine.provide({
    actions: {
      discardAttempt: enqueueActions(({ context, enqueue }) => {
        if (mutation.active !== 'discard-keeps-running') {
          // xstate types a provided action's enqueue loosely; the real action object is valid here.
          enqueue(realDiscard as Parameters<typeof enqueue>[0]);
          return;
        }
        for (const v of (context as TurnModule.TurnContext).calls) {
          if (!v) continue;
          if (v.phase !== 'running' && v.ref) {
            enqueue.sendTo(v.ref, { type: 'call.discard' });
            enqueue.stopChild(v.ref);
          }
          v.phase = 'discarded';
        }
      }),
    },
    guards: {
      canRetry: (args, params) => {
        if (mutation.active !== 'retry-off-by-one') return realCanRetry(args, params);
        const { context, event } = args as { context: TurnModule.TurnContext; event: TurnModule.TurnEvent };
        return event.type === 'stream.error' && event.retryable && context.attempt <= context.settings.maxAttempts;
      },
      currentAttempt: (args, params) => {
        if (mutation.active !== 'stale-report-accepted') return realCurrentAttempt(args, params);
        const { context, event } = args as { context: TurnModule.TurnContext; event: TurnModule.TurnEvent };
        // A call actor's done event, whichever attempt it comes from.
        const r = 'output' in event ? event.output : undefined;
        return r !== undefined && context.calls[r.index] !== undefined;
      },
      actionableReport: (args, params) => {
        if (mutation.active !== 'stale-report-accepted') return realActionableReport(args, params);
        const { context, event } = args as { context: TurnModule.TurnContext; event: TurnModule.TurnEvent };
        // A status report the turn acts on, whichever attempt it comes from.
        return event.type === 'call.status' && (event.phase === 'emittable' || event.phase === 'invalid' || event.phase === 'complete') && context.calls[event.index] !== undefined;
      },
    },
  });
  return { ...real, turnMachine };
}
