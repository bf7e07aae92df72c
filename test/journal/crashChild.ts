/**
 * The crash suite's child: runs one journaled turn with real tools on a workspace, and is killed
 * (SIGKILL) by the parent somewhere in the middle. Prints `ready` just before the turn starts and
 * `done` when it finished. Usage: node crashChild.js <store spec> <turn id> <workspace dir>
 */
import { runTurn } from '../../src/engine/runTurn';
import { createTurnJournal } from '../../src/journal/journal';
import { openStore } from '../../src/journal/open';
import { CRASH_TURN, chatStream, workspaceTools } from './workspaceTools';

async function main(): Promise<void> {
  const [spec, turn, dir] = process.argv.slice(2);
  if (!spec || !turn || !dir) throw new Error('usage: crashChild <store spec> <turn id> <workspace dir>');
  const store = await openStore(spec);
  const journal = await createTurnJournal(store, turn, { format: 'openai-chat' });
  process.stdout.write('ready\n');
  const res = await runTurn({ format: 'openai-chat', stream: chatStream(CRASH_TURN, 4), tools: workspaceTools(dir, { ms: 12 }), journal });
  await store.close();
  process.stdout.write(`done ${res.summary.outcome}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`crashChild: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
});
