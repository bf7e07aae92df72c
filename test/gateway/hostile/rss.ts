/**
 * The hostile suites' idle-RSS check (jest only: clients.ts is also compiled with the benches, so
 * it cannot use jest's globals).
 */
import type { ChildGateway } from './clients';

const toMiB = (bytes: number): number => Math.round(bytes / 104857.6) / 10;

/**
 * Wait up to `waitMs` for the child's idle RSS to come under `bound`, then assert it is (the
 * message carries both in MiB). `SLUICE_HOSTILE_RSS=1` (by hand) also prints, under `label`, where
 * RSS settles 9 s on (after `sluice serve`'s two idle collections) besides when it got under.
 */
export async function expectRssBack(gw: ChildGateway, bound: number, waitMs: number, label: string, baseline: Record<string, number>): Promise<void> {
  const t0 = Date.now();
  let rss = gw.rss() ?? 0;
  while (rss > bound && Date.now() - t0 < waitMs) {
    await new Promise((r) => setTimeout(r, 100));
    rss = gw.rss() ?? 0;
  }
  if (process.env.SLUICE_HOSTILE_RSS === '1') {
    const afterMs = Date.now() - t0;
    while (Date.now() - t0 < 9000) await new Promise((r) => setTimeout(r, 250));
    const mibs = Object.fromEntries(Object.entries(baseline).map(([k, v]) => [`${k}MiB`, toMiB(v)]));
    const line = { test: expect.getState().currentTestName, ...mibs, rssMiB: toMiB(rss), afterMs, settledMiB: toMiB(gw.rss() ?? 0) };
    process.stdout.write(`[${label} rss] ${JSON.stringify(line)}\n`);
  }
  const seen = { rssMiB: toMiB(rss), boundMiB: toMiB(bound) };
  expect({ ...seen, within: rss <= bound }).toEqual({ ...seen, within: true });
}
