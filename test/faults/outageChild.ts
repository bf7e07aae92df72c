/**
 * The store-outage child: runs one journaled turn with real tools (test/journal/workspaceTools.ts)
 * while the parent stops its PostgreSQL server (`pg_ctl stop -m immediate`) somewhere in the
 * middle. It is never killed: it must end by itself, with `done <outcome>` (the turn finished, the
 * outage ridden through by the journal's retries) or `failed <JournalError code>` (the journal
 * gave up; the turn is for resume to finish) on stdout, exit 0, nothing on stderr. An unhandled
 * 'error' event or rejection would end it with a stack trace and a non-zero exit instead.
 * Usage: node outageChild.js <store spec> <turn id> <workspace dir> <retry ms>
 */
import { runTurn } from '../../src/engine/runTurn';
import { createTurnJournal } from '../../src/journal/journal';
import { openStore } from '../../src/journal/open';
import { JournalError } from '../../src/journal/records';
import { CRASH_TURN, chatStream, workspaceTools } from '../journal/workspaceTools';

async function main(): Promise<void> {
  const [spec, turn, dir, retryMs] = process.argv.slice(2);
  if (!spec || !turn || !dir) throw new Error('usage: outageChild <store spec> <turn id> <workspace dir> <retry ms>');
  const store = await openStore(spec);
  const journal = await createTurnJournal(store, turn, { format: 'openai-chat' }, { retryMs: Number(retryMs ?? 500) });
  process.stdout.write('ready\n');
  try {
    const res = await runTurn({ format: 'openai-chat', stream: chatStream(CRASH_TURN, 15), tools: workspaceTools(dir, { ms: 120 }), journal });
    process.stdout.write(`done ${res.summary.outcome} retries=${journal.retries}\n`);
  } catch (err) {
    if (!(err instanceof JournalError)) throw err;
    process.stdout.write(`failed ${err.code} retries=${journal.retries}\n`);
  } finally {
    await store.close();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`outageChild: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
});
