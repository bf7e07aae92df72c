/**
 * Standalone throughput run (plain node, outside Jest's sandbox, which distorts timings):
 *   npx ts-node --transpile-only test/wire/perfRun.ts [bytes...]
 * Prints one JSON line per (format, size, input kind) with median CPU ms and the ratio
 * sluice / minimal eventsource-parser consumer.
 */
import {
  anthropicSse,
  chatSse,
  compare,
  makeArgs,
  minimalConsumer,
  sluiceConsumer,
  toBytes,
} from './workload';

const sizes = process.argv
  .slice(2)
  .map(Number)
  .filter((n) => n > 0);
for (const size of sizes.length > 0 ? sizes : [10_000, 100_000, 1_000_000]) {
  for (const format of ['anthropic', 'openai-chat'] as const) {
    const text = format === 'anthropic' ? anthropicSse(makeArgs(size)) : chatSse(makeArgs(size));
    const bytes = toBytes(text);
    const reps = size >= 1_000_000 ? 11 : size >= 100_000 ? 21 : 51;
    const m = compare(
      {
        minText: () => minimalConsumer(format, text),
        oursText: () => sluiceConsumer(format, text),
        minBytes: () => minimalConsumer(format, bytes),
        oursBytes: () => sluiceConsumer(format, bytes),
      },
      reps,
      3,
    );
    process.stdout.write(
      JSON.stringify({
        format,
        size,
        chunks: text.length,
        minBytesMs: +m.minBytes.toFixed(3),
        oursBytesMs: +m.oursBytes.toFixed(3),
        ratioBytes: +(m.oursBytes / m.minBytes).toFixed(3),
        minTextMs: +m.minText.toFixed(3),
        oursTextMs: +m.oursText.toFixed(3),
        ratioText: +(m.oursText / m.minText).toFixed(3),
      }) + '\n',
    );
  }
}
