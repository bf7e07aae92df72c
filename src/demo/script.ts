import type { TurnScript } from '../trace/synth';

/** Per-tool sandbox round trip of the demo, in ms (here, not in tools.ts: the scripted upstream of sluice/gateway reads it and must not load zod). */
export const DEMO_LATENCY_MS = { read_file: 800, grep: 1100, edit_file: 300 } as const;

/**
 * The demo turn: the model says what it will do, reads three files, greps for the function it is
 * about to change, then edits one file. Times are ms since the request (scaled by `timeScale`).
 * The paths and the edit match the sample workspace in examples/workspace/.
 */
export function demoScript(timeScale = 1): TurnScript {
  const t = (ms: number): number => Math.round(ms * timeScale);
  return {
    text: "I'll read the entry point, the config parser and the helpers, find every caller of parseConfig, then switch the service to strict config parsing.",
    calls: [
      { name: 'read_file', args: { path: 'src/app.ts' }, openMs: t(300), completeMs: t(700) },
      { name: 'read_file', args: { path: 'src/config.ts' }, openMs: t(800), completeMs: t(1200) },
      { name: 'read_file', args: { path: 'src/util.ts' }, openMs: t(1300), completeMs: t(1700) },
      { name: 'grep', args: { pattern: 'parseConfig(', path: 'src' }, openMs: t(1800), completeMs: t(2300) },
      {
        name: 'edit_file',
        args: { path: 'src/app.ts', old: 'const config = parseConfig(raw);', new: 'const config = parseConfig(raw, { strict: true });' },
        openMs: t(2400),
        completeMs: t(3200),
      },
    ],
    endMs: t(3500),
    finish: 'tool_calls',
    fragmentChars: 8,
    model: 'sluice-scripted-demo',
    tools: [
      { name: 'read_file', kind: 'read', durationMs: t(DEMO_LATENCY_MS.read_file) },
      { name: 'grep', kind: 'search', durationMs: t(DEMO_LATENCY_MS.grep) },
      { name: 'edit_file', kind: 'edit', durationMs: t(DEMO_LATENCY_MS.edit_file) },
    ],
  };
}
