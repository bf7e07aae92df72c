import { TurnController } from '../engine/controller';
import { AnthropicSseEncoder, type AnthropicEncodeOptions } from '../encode/anthropicSse';
import type { OutputEvent } from '../release/output';
import { createAdapter } from '../wire';
import { FormatCheck } from '../wire/detect';
import type { StreamEvent } from '../wire/events';
import type { CompletionMode } from '../engine/controller';
import type { Trace } from './trace';

/**
 * `sluice convert`: the Anthropic SSE the gateway would send for a trace. Each message in the
 * recording (a `message.start` after content begins a new one, as in multi-response recordings)
 * becomes its own Anthropic message. Only the first attempt is converted (the gateway does not
 * retry); a stream error becomes one `error` event.
 */
export interface ConvertOptions extends AnthropicEncodeOptions {
  completion?: CompletionMode;
  singleTool?: boolean;
}

export interface ConvertResult {
  sse: string;
  messages: number;
  warnings: string[];
}

export function convertTrace(trace: Trace, opts: ConvertOptions = {}): ConvertResult {
  const adapter = createAdapter(trace.format);
  const formatCheck = new FormatCheck(trace.format);
  const events: StreamEvent[] = [];
  const attempt = trace.attempts[0];
  let ended = false;
  for (const line of attempt?.lines ?? []) {
    if (ended) break;
    const mismatch = line.kind === 'data' ? formatCheck.check(line.data) : undefined;
    if (mismatch !== undefined) {
      events.push(mismatch); // another provider's payloads (src/wire/detect.ts)
      ended = true;
    } else if (line.kind === 'data') events.push(...adapter.push(line.data));
    else if (line.kind === 'error') {
      events.push({ type: 'stream.error', error: line.error, retryable: false });
      ended = true;
    } else {
      events.push(...adapter.end());
      ended = true;
    }
  }
  if (!ended) events.push(...adapter.end());

  // Split into messages at each message.start that follows content.
  const segments: StreamEvent[][] = [[]];
  let content = false;
  for (const e of events) {
    if (e.type === 'message.start' && content) {
      segments.push([]);
      content = false;
    }
    if (e.type !== 'message.start' && e.type !== 'ping' && e.type !== 'warning' && e.type !== 'usage') content = true;
    segments[segments.length - 1]!.push(e);
  }

  let sse = '';
  const warnings: string[] = [];
  segments.forEach((seg, i) => {
    const last = i === segments.length - 1;
    const c = new TurnController({
      mode: 'gateway',
      format: trace.format,
      completion: opts.completion,
      singleTool: opts.singleTool,
    });
    const enc = new AnthropicSseEncoder(opts);
    const out: OutputEvent[] = [];
    c.events.on('output', (e) => out.push(e));
    c.events.on('warning', (w) => warnings.push(`${w.code}: ${w.message}`));
    for (const e of seg) c.feed(e);
    if (!last) c.feed({ type: 'stream.end' });
    for (const e of out) sse += enc.push(e);
  });
  return { sse, messages: segments.length, warnings };
}
