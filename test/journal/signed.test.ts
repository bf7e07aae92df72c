/**
 * Signed means checked: a journal that carries a MAC chain is refused when no key is set to check
 * it (one line naming SLUICE_JOURNAL_KEY), unless the reader says "read unchecked" on purpose —
 * resumeTurn ({ verify: 'skip' }), `sluice resume` and `sluice report` (--unchecked). With the key
 * the chain is checked, and a changed record is refused.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { resumeTurn } from '../../src/engine/resume';
import { FileJournalStore } from '../../src/journal/fileStore';
import { encodeRecord } from '../../src/journal/codec';
import type { Report } from '../../src/report/model';
import { runCli } from '../helpers/cli';

const KEY = 'k'.repeat(32);
const TRACE = path.resolve(__dirname, '../../examples/early-call.anthropic.trace.jsonl');
let tmp = '';
let saved: string | undefined;

beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-signed-'));
  saved = process.env.SLUICE_JOURNAL_KEY;
});
afterAll(() => {
  if (saved === undefined) delete process.env.SLUICE_JOURNAL_KEY;
  else process.env.SLUICE_JOURNAL_KEY = saved;
  fs.rmSync(tmp, { recursive: true, force: true });
});

/** The CLI with SLUICE_JOURNAL_KEY set to `env.key`, or unset. */
function sluice(env: { key?: string }, ...args: string[]): ReturnType<typeof runCli> {
  delete process.env.SLUICE_JOURNAL_KEY;
  return runCli(args, env.key === undefined ? {} : { SLUICE_JOURNAL_KEY: env.key });
}

/** A signed journal of a replayed turn, cut after its `end` record (what a crash leaves). */
async function signedJournal(name: string): Promise<string> {
  const dir = path.join(tmp, name);
  fs.mkdirSync(dir);
  const file = path.join(dir, 'turn-1');
  const r = await sluice({ key: KEY }, 'replay', TRACE, '--journal', file, '--json');
  expect(r.code).toBe(0);
  const lines = fs.readFileSync(file, 'utf8').trim().split('\n');
  expect(lines.every((l) => l.includes('"m":"'))).toBe(true);
  const end = lines.findIndex((l) => l.includes('"k":"end"'));
  fs.writeFileSync(file, lines.slice(0, end + 1).join('\n') + '\n');
  return file;
}

const ONE_LINE = /SLUICE_JOURNAL_KEY/;

test('resumeTurn: refused without the key, resumed with it, or unchecked with verify: skip', async () => {
  const file = await signedJournal('api');
  delete process.env.SLUICE_JOURNAL_KEY;
  const store = (): FileJournalStore => FileJournalStore.forFile(file).store;
  const turn = path.basename(file);
  const opts = { turn, classify: () => ({ safe: true }) as never, runTool: async () => ({ ok: true, content: 'ok' }) };
  const s1 = store();
  await expect(resumeTurn({ ...opts, store: s1 })).rejects.toMatchObject({ code: 'refused', message: expect.stringMatching(ONE_LINE) });
  await s1.close();
  // Nothing was written by the refusal: the file is as it was.
  const before = fs.readFileSync(file);
  const s2 = store();
  await expect(resumeTurn({ ...opts, store: s2, verify: 'skip' })).resolves.toMatchObject({ alreadyCommitted: false });
  await s2.close();
  expect(fs.readFileSync(file).length).toBeGreaterThan(before.length);
});

test('sluice resume: one line naming SLUICE_JOURNAL_KEY without the key; runs with it; --unchecked reads it unchecked', async () => {
  const a = await signedJournal('cli-a');
  const refused = await sluice({}, 'resume', a);
  expect(refused.code).toBe(1);
  expect(refused.err.trim().split('\n')).toHaveLength(1);
  expect(refused.err).toMatch(ONE_LINE);
  expect(refused.err).toMatch(/--unchecked/);
  const ok = await sluice({ key: KEY }, 'resume', a, '--json');
  expect(ok.code).toBe(0);
  const b = await signedJournal('cli-b');
  expect((await sluice({}, 'resume', b, '--unchecked', '--json')).code).toBe(0);
});

test('sluice report: a signed journal is checked with the key, refused without it, read with --unchecked; a changed record is refused', async () => {
  const file = await signedJournal('report');
  const without = await sluice({}, 'report', file, '--json');
  expect(without.code).toBe(2);
  expect(without.err.trim().split('\n')).toHaveLength(1);
  expect(without.err).toMatch(ONE_LINE);
  const withKey = await sluice({ key: KEY }, 'report', file, '--json');
  expect(withKey.code).toBe(0);
  expect((JSON.parse(withKey.out) as Report).totals.turns).toBe(1);
  const unchecked = await sluice({}, 'report', file, '--json', '--unchecked');
  expect(unchecked.code).toBe(0);
  expect(unchecked.err).toMatch(/read 1 signed journal unchecked/);
  // A record changed and its CRC recomputed (what a forger without the key can do): refused with the key.
  const recs = fs
    .readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l.slice(9)) as Record<string, unknown>);
  const i = recs.findIndex((r) => r.k === 'released');
  recs[i] = { ...recs[i], t: 1 };
  const forged = path.join(tmp, 'report', 'forged');
  fs.writeFileSync(forged, Buffer.concat(recs.map((r) => encodeRecord(r as never))));
  const f = await sluice({ key: KEY }, 'report', forged, '--json');
  expect(f.code).toBe(2);
  expect(f.err).toContain(`journal refused at record ${i}: MAC mismatch`);
});
