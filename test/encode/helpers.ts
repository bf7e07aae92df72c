import type { IdGenerator } from '../../src/encode/anthropicSse';

/** Deterministic ids: msg_test_1, toolu_test_1, toolu_test_2, ... */
export function sequentialIds(): IdGenerator {
  let m = 0;
  let t = 0;
  return (kind) => (kind === 'message' ? `msg_test_${++m}` : `toolu_test_${++t}`);
}

export interface Frame {
  event: string;
  // Parsed `data:` JSON of an SSE frame (shape depends on the event type).
  data: Record<string, unknown>;
}

/** Split SSE text into frames; asserts the exact `event: X\ndata: {json}\n\n` framing. */
export function parseSse(text: string): Frame[] {
  if (text === '') return [];
  if (!text.endsWith('\n\n')) throw new Error('SSE text must end with a blank line');
  return text
    .slice(0, -2)
    .split('\n\n')
    .map((chunk) => {
      const m = /^event: ([a-z_]+)\ndata: (.*)$/.exec(chunk);
      if (!m) throw new Error(`bad frame: ${JSON.stringify(chunk)}`);
      const data = JSON.parse(m[2]) as Record<string, unknown>;
      if (data.type !== m[1]) throw new Error(`event ${m[1]} carries data.type ${String(data.type)}`);
      return { event: m[1], data };
    });
}

/** Content block types in emission order, checking one block open at a time and consecutive indices. */
export function blockTypes(frames: Frame[]): string[] {
  const types: string[] = [];
  let open: number | undefined;
  for (const f of frames) {
    if (f.event === 'content_block_start') {
      if (open !== undefined) throw new Error(`block ${f.data.index} starts while ${open} is open`);
      if (f.data.index !== types.length) throw new Error(`index ${f.data.index}, expected ${types.length}`);
      open = f.data.index as number;
      types.push((f.data.content_block as { type: string }).type);
    } else if (f.event === 'content_block_delta') {
      if (f.data.index !== open) throw new Error(`delta for ${f.data.index} while ${open} is open`);
    } else if (f.event === 'content_block_stop') {
      if (f.data.index !== open) throw new Error(`stop for ${f.data.index} while ${open} is open`);
      open = undefined;
    } else if (f.event === 'message_delta' || f.event === 'message_stop') {
      if (open !== undefined) throw new Error(`${f.event} while block ${open} is open`);
    }
  }
  return types;
}
