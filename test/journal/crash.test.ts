/**
 * The crash suite (test/journal/crashSuite.ts) on the embedded file store. Default: a CI sample
 * of 8 points; `npm run test:crash` runs 240 (SLUICE_CRASH_POINTS, SLUICE_CRASH_SEED to vary).
 */
import { openStore } from '../../src/journal/open';
import { defineCrashSuite } from './crashSuite';

defineCrashSuite({
  name: 'file',
  spec: (dir) => `file:${dir}/journal`,
  open: openStore,
});
