import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * The recorded provider streams live beside the repository in ../shared/fixtures (never copied
 * in). When that folder is absent, suites that need it skip with a visible message.
 */
export const FIXTURES_DIR = path.resolve(__dirname, '..', '..', '..', 'shared', 'fixtures');
export const haveFixtures = fs.existsSync(FIXTURES_DIR);

if (!haveFixtures) {
  process.stderr.write(`\n[sluice tests] ${FIXTURES_DIR} is absent: fixture-based tests are SKIPPED.\n`);
}

/** `describe` that skips (visibly) when the shared fixtures folder is missing. */
export const describeFixtures: jest.Describe = haveFixtures ? describe : describe.skip;

/** Files (relative to the fixtures folder) under `sub` whose names match `re`. */
export function listFixtures(sub: string, re: RegExp = /./): string[] {
  const dir = path.join(FIXTURES_DIR, sub);
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .filter((f) => re.test(f))
    .sort()
    .map((f) => path.join(sub, f));
}

export function readFixture(rel: string): string {
  return fs.readFileSync(path.join(FIXTURES_DIR, rel), 'utf8');
}
