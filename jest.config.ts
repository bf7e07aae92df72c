import type { Config } from 'jest';

/**
 * Suites that assert wall-clock bounds under load of their own (a /health answer within 1 s while
 * a child gateway parses hostile bodies, its event-loop delay, keep-alive pings within 200 ms,
 * 200 concurrent streams within the SDK's timeout, refusals within 500 ms, real-clock turns
 * compared within 20 ms). `npm test` runs them after the rest, one at a time, so that no other
 * test file competes with them for the 2 cores. A new suite that asserts wall-clock time goes here.
 */
const SERIAL = [
  'test/gateway/hostile/gateway.test.ts',
  'test/gateway/hostile/limits.test.ts',
  'test/gateway/hostile/operators.test.ts',
  'test/gateway/hostile/hugeEvent.test.ts', // one huge upstream event: /health within 1 s, loop CPU bound
  'test/gateway/faults3/modelMatch.test.ts', // model-map globs against 5,000-char names well within 1 s
  'test/gateway/faults3/backendAnswers.test.ts', // huge / deep /v1/models answers: 502 within seconds, RSS bounded
  'test/gateway/faults3/otlpExport.test.ts', // `sluice serve` children exporting every 200 ms to a down / 500 / hanging collector
  'test/gateway/errors.test.ts',
  'test/gateway/load.test.ts',
  'test/gateway/health.test.ts', // the operations listener answers within 900 ms while the main accept queue is full
  'test/gateway/healthProcess.test.ts', // an idle `sluice serve` child exits within 1 s of SIGTERM
  'test/hostile/engine.test.ts',
  'test/hostile/cli.test.ts',
  'test/telemetry/turn.test.ts', // shadow-mode start times within ±20 ms of a real-clock turn
  'test/report/report.test.ts', // a scripted day through a real gateway: which calls start early
  'test/cli/demo.test.ts', // `sluice demo` on the real clock: streaming dispatch saves time
  'test/bench/headline.test.ts', // paced streams on the real clock: reads start before the stream ends
  'test/docs/numbers.test.ts', // bundles, and the load time of fresh node processes
  'test/dbos/crash.test.ts', // real processes SIGKILLed at random times; a safe read starts before the model stream ends
  'test/engine/retryHttp.test.ts', // a 429 with retry-after: 2 is retried no sooner than 2 s (lower bounds)
  'test/report/gatewayAb.test.ts', // --release-holdout through sluice report: the saving is the tool time (±40%)
  'test/gateway/holdout.test.ts', // --release-holdout: the arms' gaps differ by the tool time (±40%)
  'test/gateway/earlyAnswerLoad.test.ts', // sixteen concurrent 31 MiB uploads answered early: every client reads its status
  'test/gateway/faults3/earlyRefusals.test.ts', // paced uploads past the old 1 s close; a refused flood closed after 1 s, the drained ones at 6 s
];
const serialPattern = SERIAL.map((f) => `<rootDir>/${f.replace(/\./g, '\\.')}$`);

const base: Config = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  // Transpile only (`isolatedModules`): the types are checked once by `tsc --noEmit -p .` (CI's
  // typecheck step covers test/ too). Type-checking each test file again inside Jest cost 3.4× the
  // CPU per file (`npx jest --no-cache test/journal/integrity.test.ts`: 31.6 s → 9.2 s user).
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: { isolatedModules: true } }] },
  // examples/ import the package by its name, as users write it.
  moduleNameMapper: { '^sluice$': '<rootDir>/src/index.ts' },
};

const config: Config = {
  // `npm test` = `jest --selectProjects parallel && jest --selectProjects serial --runInBand`:
  // two test files at a time on CI's 2 cores (Jest's default is cores - 1 = 1 worker), then the
  // SERIAL suites alone. A bare `npx jest FILE…` runs whatever matches, both projects.
  projects: [
    { ...base, displayName: 'parallel', testMatch: ['**/*.test.ts'], testPathIgnorePatterns: ['/node_modules/', ...serialPattern] },
    { ...base, displayName: 'serial', testMatch: SERIAL.map((f) => `<rootDir>/${f}`) },
  ],
  maxWorkers: 2,
  // Deep model-based runs (N = 3) are opt-in: `npm run test:deep`.
  testTimeout: 30_000,
};

export default config;
