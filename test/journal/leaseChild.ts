/**
 * Lease race child: waits until the wall-clock instant argv[4], asks the file store for the
 * turn's lease, prints `got` or `none`, then holds it for argv[5] ms and exits without
 * releasing (like a worker that dies). Usage: node leaseChild.js <dir> <turn> <owner> <atMs> <holdMs>
 */
import { FileJournalStore } from '../../src/journal/fileStore';

async function main(): Promise<void> {
  const [dir, turn, owner, at, hold] = process.argv.slice(2);
  const store = new FileJournalStore(dir!);
  while (Date.now() < Number(at)) {
    /* spin to the start instant: the racers start within a millisecond of each other */
  }
  const lease = await store.lease(turn!, owner!, 60_000);
  process.stdout.write(lease ? 'got\n' : 'none\n');
  await new Promise((r) => setTimeout(r, Number(hold)));
}

void main();
