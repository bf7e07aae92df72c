import * as fs from 'node:fs';
import * as path from 'node:path';
import { SYNTH_FORMATS, synthesizeTrace, type TurnScript } from '../src/trace/synth';
import { formatTrace } from '../src/trace/trace';

/**
 * Writes the example traces in examples/ (generated, committed, checked by a test).
 * Run: npm run build && node dist/scripts/make-examples.js
 */

const TOOLS = [
  { name: 'read_file', kind: 'read', durationMs: 3000, result: 'file contents' },
  { name: 'grep', kind: 'search', durationMs: 3000, result: '3 matches' },
  { name: 'edit_file', kind: 'edit', durationMs: 500, result: 'edited' },
];

/** SPEC/issue 3: reads complete at 1.0 s and 2.0 s, grep at 3.0 s, edit at 4.0 s, stream end at 5.0 s. */
export const CODING_TURN: TurnScript = {
  text: 'Let me look at the relevant files first.',
  calls: [
    { name: 'read_file', args: { path: 'src/app.ts' }, openMs: 500, completeMs: 1000 },
    { name: 'read_file', args: { path: 'src/util.ts' }, openMs: 1500, completeMs: 2000 },
    { name: 'grep', args: { pattern: 'parseConfig', path: 'src' }, openMs: 2500, completeMs: 3000 },
    { name: 'edit_file', args: { path: 'src/app.ts', old: 'parseConfig(raw)', new: 'parseConfig(raw, { strict: true })' }, openMs: 3500, completeMs: 4000 },
  ],
  endMs: 5000,
  tools: TOOLS,
};

/** Issue 2: one call complete at 2,700 ms of a stream that ends at 5,800 ms. */
export const EARLY_CALL: TurnScript = {
  text: 'Reading the config.',
  calls: [{ name: 'read_file', args: { path: 'config/settings.json' }, openMs: 1200, completeMs: 2700 }],
  endMs: 5800,
  tools: [{ name: 'read_file', kind: 'read', durationMs: 1000, result: '{}' }],
};

/**
 * Issue 7: raw open-model text (Hermes/Qwen markup inside OpenAI-chat `content`), one call whose
 * closing marker arrives at 2,700 ms of a stream that ends at 5,800 ms.
 */
export function hermesTextTrace(): string {
  const chunk = (content: string | null, finish: string | null = null) => ({
    id: 'chatcmpl-text',
    object: 'chat.completion.chunk',
    created: 0,
    model: 'qwen3',
    choices: [{ index: 0, delta: content === null ? {} : { content }, finish_reason: finish }],
  });
  const lines: Array<{ t: number; data: unknown }> = [
    { t: 0, data: chunk('<think>Need the config.</think>Reading the config.\n') },
    { t: 1200, data: chunk('<tool_call>\n{"name": "read_file", ') },
    { t: 2000, data: chunk('"arguments": {"path": "config/settings.json"}}') },
    { t: 2700, data: chunk('\n</tool_call>') },
    { t: 4000, data: chunk('\nI will summarise it next.') },
    { t: 5800, data: chunk(null, 'stop') },
    { t: 5800, data: '[DONE]' },
  ];
  const header = { sluice: 'trace', format: 'text:hermes', tools: EARLY_CALL.tools };
  return [header, ...lines].map((l) => JSON.stringify(l)).join('\n') + '\n';
}

export function exampleFiles(): Map<string, string> {
  const files = new Map<string, string>();
  for (const f of SYNTH_FORMATS) {
    files.set(`coding-turn.${f}.trace.jsonl`, formatTrace(synthesizeTrace(f, CODING_TURN)));
    files.set(`early-call.${f}.trace.jsonl`, formatTrace(synthesizeTrace(f, EARLY_CALL)));
  }
  files.set('early-call.text-hermes.trace.jsonl', hermesTextTrace());
  return files;
}

if (require.main === module) {
  const dir = path.resolve(__dirname, '..', '..', 'examples');
  fs.mkdirSync(dir, { recursive: true });
  for (const [name, text] of exampleFiles()) fs.writeFileSync(path.join(dir, name), text);
  process.stdout.write(`wrote ${exampleFiles().size} example traces to examples/\n`);
}
