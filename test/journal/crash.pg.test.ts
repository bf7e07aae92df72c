/**
 * The crash suite (test/journal/crashSuite.ts) on the PostgreSQL store: the child process that is
 * killed and the one that resumes open `postgres://…` like an embedder would. Needs a server
 * (`SLUICE_PG_URL`; `.ci/run` starts one); skips visibly without. CI sample as for the file
 * store; `SLUICE_CRASH=1 npm run test:crash` runs the full set on both stores.
 */
import { openStore } from '../../src/journal/open';
import { defineCrashSuite } from './crashSuite';

const URL = process.env.SLUICE_PG_URL;
if (URL) {
  // One set of tables per run, so turn ids of earlier runs never collide.
  const prefix = `crash${process.pid}_${Date.now() % 1_000_000}_`;
  const sep = URL.includes('?') ? '&' : '?';
  defineCrashSuite({
    name: 'postgres',
    spec: () => `${URL}${sep}table_prefix=${prefix}`,
    open: openStore,
  });
} else {
  process.stderr.write('\n[sluice tests] SLUICE_PG_URL is not set: the PostgreSQL crash suite is SKIPPED (scripts/pg-test-server.sh start).\n');
  describe.skip('crash suite on the postgres store (no SLUICE_PG_URL)', () => {
    test('skipped', () => undefined);
  });
}
