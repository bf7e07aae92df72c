import type { WireFormat } from '../wire/events';
import type { SimToolSpec, Trace, TraceLine } from './trace';

/**
 * Timed synthetic traces in each provider's own wire shape, from one small script. Used by the
 * example traces, tests, the demo's scripted model and the benchmark corpus, so that "call 0
 * completes at 2,700 ms" means the same thing in every format.
 *
 * Each call's argument text is cut into fragments spread evenly from `openMs` to `completeMs`;
 * the last fragment (and the provider's completion evidence, where it has one) lands exactly at
 * `completeMs`. Calls must not overlap in time (providers stream them one after another).
 */

export interface ScriptCall {
  name: string;
  args: Record<string, unknown>;
  openMs: number;
  completeMs: number;
  id?: string;
}

export interface TurnScript {
  /** Text written before the first call, at t = 0 (split in a few deltas). */
  text?: string;
  /** Reasoning written before the text. */
  thinking?: string;
  calls: ScriptCall[];
  /** Time of the terminal chunk(s). */
  endMs: number;
  finish?: 'tool_calls' | 'stop' | 'length';
  /** Characters per argument fragment (default 12). */
  fragmentChars?: number;
  model?: string;
  tools?: SimToolSpec[];
}

type SynthFormat = Extract<WireFormat, 'anthropic' | 'openai-chat' | 'openai-responses' | 'gemini'>;
export const SYNTH_FORMATS: readonly SynthFormat[] = ['anthropic', 'openai-chat', 'openai-responses', 'gemini'];

function split(text: string, n: number): string[] {
  const out: string[] = [];
  // Split on code points so a surrogate pair is never cut (real providers never cut one either).
  const cps = Array.from(text);
  for (let i = 0; i < cps.length; i += n) out.push(cps.slice(i, i + n).join(''));
  return out.length > 0 ? out : [''];
}

function spread(startMs: number, endMs: number, count: number): number[] {
  if (count <= 1) return [endMs];
  const step = (endMs - startMs) / (count - 1);
  return Array.from({ length: count }, (_, i) => Math.round(startMs + step * i));
}

function callId(c: ScriptCall, i: number, prefix: string): string {
  return c.id ?? `${prefix}${String(i).padStart(2, '0')}sluice`;
}

export function synthesizeTrace(format: SynthFormat, s: TurnScript): Trace {
  const lines: TraceLine[] = [];
  const push = (t: number, data: unknown): void => {
    lines.push({ t, kind: 'data', data });
  };
  const n = s.fragmentChars ?? 12;
  const model = s.model ?? 'sluice-scripted';
  const finish = s.finish ?? (s.calls.length > 0 ? 'tool_calls' : 'stop');
  const textParts = s.text ? split(s.text, 24) : [];
  const thinkingParts = s.thinking ? split(s.thinking, 24) : [];

  switch (format) {
    case 'anthropic': {
      push(0, {
        type: 'message_start',
        message: { id: 'msg_synth', type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 100, output_tokens: 1 } },
      });
      let block = 0;
      if (thinkingParts.length) {
        push(0, { type: 'content_block_start', index: block, content_block: { type: 'thinking', thinking: '', signature: '' } });
        for (const p of thinkingParts) push(0, { type: 'content_block_delta', index: block, delta: { type: 'thinking_delta', thinking: p } });
        push(0, { type: 'content_block_delta', index: block, delta: { type: 'signature_delta', signature: 'sig-synth' } });
        push(0, { type: 'content_block_stop', index: block++ });
      }
      if (textParts.length) {
        push(0, { type: 'content_block_start', index: block, content_block: { type: 'text', text: '' } });
        for (const p of textParts) push(0, { type: 'content_block_delta', index: block, delta: { type: 'text_delta', text: p } });
        push(0, { type: 'content_block_stop', index: block++ });
      }
      s.calls.forEach((c, i) => {
        push(c.openMs, { type: 'content_block_start', index: block, content_block: { type: 'tool_use', id: callId(c, i, 'toolu_'), name: c.name, input: {} } });
        const frags = split(JSON.stringify(c.args), n);
        const times = spread(c.openMs, c.completeMs, frags.length);
        frags.forEach((f, k) => push(times[k]!, { type: 'content_block_delta', index: block, delta: { type: 'input_json_delta', partial_json: f } }));
        push(c.completeMs, { type: 'content_block_stop', index: block++ });
      });
      const stop = finish === 'tool_calls' ? 'tool_use' : finish === 'length' ? 'max_tokens' : 'end_turn';
      push(s.endMs, { type: 'message_delta', delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 200 } });
      push(s.endMs, { type: 'message_stop' });
      break;
    }
    case 'openai-chat': {
      const base = { id: 'chatcmpl-synth', object: 'chat.completion.chunk', created: 0, model };
      const chunk = (delta: unknown, finish_reason: string | null = null) => ({ ...base, choices: [{ index: 0, delta, finish_reason }] });
      push(0, chunk({ role: 'assistant', content: null }));
      for (const p of thinkingParts) push(0, chunk({ reasoning_content: p }));
      for (const p of textParts) push(0, chunk({ content: p }));
      s.calls.forEach((c, i) => {
        push(c.openMs, chunk({ tool_calls: [{ index: i, id: callId(c, i, 'call_'), type: 'function', function: { name: c.name, arguments: '' } }] }));
        const frags = split(JSON.stringify(c.args), n);
        const times = spread(c.openMs, c.completeMs, frags.length);
        frags.forEach((f, k) => push(times[k]!, chunk({ tool_calls: [{ index: i, function: { arguments: f } }] })));
      });
      push(s.endMs, chunk({}, finish));
      push(s.endMs, { ...base, choices: [], usage: { prompt_tokens: 100, completion_tokens: 200, total_tokens: 300 } });
      push(s.endMs, '[DONE]');
      break;
    }
    case 'openai-responses': {
      let seq = 0;
      const ev = (t: number, type: string, rest: Record<string, unknown>) => push(t, { type, sequence_number: seq++, ...rest });
      ev(0, 'response.created', { response: { id: 'resp_synth', status: 'in_progress', model, output: [] } });
      let out = 0;
      if (thinkingParts.length) {
        ev(0, 'response.output_item.added', { output_index: out, item: { id: 'rs_synth', type: 'reasoning', summary: [] } });
        for (const p of thinkingParts) ev(0, 'response.reasoning_summary_text.delta', { item_id: 'rs_synth', output_index: out, summary_index: 0, delta: p });
        ev(0, 'response.output_item.done', { output_index: out++, item: { id: 'rs_synth', type: 'reasoning', summary: [] } });
      }
      if (textParts.length) {
        ev(0, 'response.output_item.added', { output_index: out, item: { id: 'msg_synth', type: 'message', role: 'assistant', content: [] } });
        for (const p of textParts) ev(0, 'response.output_text.delta', { item_id: 'msg_synth', output_index: out, content_index: 0, delta: p });
        ev(0, 'response.output_item.done', { output_index: out++, item: { id: 'msg_synth', type: 'message', role: 'assistant', content: [] } });
      }
      s.calls.forEach((c, i) => {
        const item = { id: `fc_${i}`, type: 'function_call', call_id: callId(c, i, 'call_'), name: c.name, arguments: '', status: 'in_progress' };
        ev(c.openMs, 'response.output_item.added', { output_index: out, item });
        const args = JSON.stringify(c.args);
        const frags = split(args, n);
        const times = spread(c.openMs, c.completeMs, frags.length);
        frags.forEach((f, k) => ev(times[k]!, 'response.function_call_arguments.delta', { item_id: item.id, output_index: out, delta: f }));
        ev(c.completeMs, 'response.function_call_arguments.done', { item_id: item.id, output_index: out, arguments: args });
        ev(c.completeMs, 'response.output_item.done', { output_index: out++, item: { ...item, arguments: args, status: 'completed' } });
      });
      const status = finish === 'length' ? 'incomplete' : 'completed';
      ev(s.endMs, `response.${status}`, { response: { id: 'resp_synth', status, model, usage: { input_tokens: 100, output_tokens: 200, total_tokens: 300 } } });
      break;
    }
    case 'gemini': {
      const resp = (parts: unknown[], finishReason?: string) => ({
        candidates: [{ content: { role: 'model', parts }, ...(finishReason ? { finishReason } : {}) }],
        modelVersion: model,
      });
      for (const p of thinkingParts) push(0, resp([{ text: p, thought: true }]));
      for (const p of textParts) push(0, resp([{ text: p }]));
      // Gemini sends a whole functionCall part when the call is complete.
      s.calls.forEach((c) => push(c.completeMs, resp([{ functionCall: { name: c.name, args: c.args } }])));
      push(s.endMs, {
        ...resp([{ text: '' }], finish === 'length' ? 'MAX_TOKENS' : 'STOP'),
        usageMetadata: { promptTokenCount: 100, candidatesTokenCount: 200, totalTokenCount: 300 },
      });
      break;
    }
  }
  lines.sort((a, b) => a.t - b.t); // stable: keeps same-time order
  return { format, tools: s.tools, attempts: [{ startMs: 0, lines }], source: 'trace' };
}
