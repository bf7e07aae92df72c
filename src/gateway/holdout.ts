/**
 * The gateway's A/B of early release (`sluice serve --release-holdout FRACTION`, SPEC §13).
 *
 * Each model request is put in one of two arms when it arrives, independently and at random:
 * `holdout` (the control group, with probability FRACTION) holds every tool call until the
 * backend's stream has ended — what a gateway without stream-driven dispatch does — and `early`
 * (the rest) releases each call as soon as it is ready. The arm is on the request's `turn` log
 * record and SERVER span; `sluice report` compares how long after a response's stream ended the
 * client came back with the tool results (src/gateway/sessionLink.ts) in the two arms.
 */

/** Which way a request's tool calls were released. */
export type ReleaseArm = 'early' | 'holdout';

export const RELEASE_ARMS: readonly ReleaseArm[] = ['early', 'holdout'];

/** The arm of one request: `holdout` with probability `fraction` (0 → always early, 1 → always holdout). */
export function chooseArm(fraction: number, random: () => number = Math.random): ReleaseArm {
  if (!(fraction > 0)) return 'early';
  if (fraction >= 1) return 'holdout';
  return random() < fraction ? 'holdout' : 'early';
}

/**
 * `--release-holdout` as given on the command line: a number from 0 to 1 (a share of requests).
 * Returns the fraction, or a one-line message saying what is wrong.
 */
export function parseHoldoutFraction(text: string): { fraction: number } | { error: string } {
  const t = text.trim();
  const n = /^(?:\d+(?:\.\d*)?|\.\d+)$/.test(t) ? Number(t) : NaN;
  if (!Number.isFinite(n) || n < 0 || n > 1) {
    return { error: `--release-holdout must be a fraction from 0 to 1 (e.g. 0.1 holds every tool call to the end of the stream for 10% of requests), got ${JSON.stringify(text)}` };
  }
  return { fraction: n };
}
