/** Internal helpers shared by the history importers (shapes.ts, aiSdk.ts); not exported by the package. */
import type { HistoryMessage, ToolResultRecord } from './types';

export type Obj = Record<string, unknown>;

export function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

/** Builds neutral messages; merges consecutive tool results; looks up result names from calls. */
export class Builder {
  readonly out: HistoryMessage[] = [];
  constructor(private readonly warn: (m: string) => void) {}

  last(): HistoryMessage | undefined {
    return this.out[this.out.length - 1];
  }

  user(text: string): void {
    this.out.push({ role: 'user', content: text });
  }

  /** A new assistant message (or the open one when `merge` and the last message is an assistant). */
  assistant(merge: boolean): Extract<HistoryMessage, { role: 'assistant' }> {
    const last = this.last();
    if (merge && last?.role === 'assistant') return last;
    const m: Extract<HistoryMessage, { role: 'assistant' }> = { role: 'assistant', content: '', calls: [] };
    this.out.push(m);
    return m;
  }

  result(r: Omit<ToolResultRecord, 'name'> & { name?: string }): void {
    const last = this.last();
    const name = r.name || this.callName(r.callId);
    const rec: ToolResultRecord = { callId: r.callId, name, ok: r.ok, content: r.content };
    if (last?.role === 'tool') last.results.push(rec);
    else this.out.push({ role: 'tool', results: [rec] });
  }

  /** Name of the call with this id in the nearest preceding assistant message. */
  callName(id: string): string {
    for (let i = this.out.length - 1; i >= 0; i--) {
      const m = this.out[i];
      if (m.role === 'assistant') return m.calls.find((c) => c.id === id)?.name ?? '';
    }
    return '';
  }

  parseArgs(raw: unknown, where: string): Record<string, unknown> {
    if (isObj(raw)) return raw;
    if (typeof raw === 'string') {
      if (raw.trim() === '') return {};
      try {
        const v: unknown = JSON.parse(raw);
        if (isObj(v)) return v;
      } catch {
        // fall through
      }
    }
    this.warn(`${where}: arguments are not a JSON object; imported as {}`);
    return {};
  }
}

export function addThinking(m: { thinking?: string }, text: string): void {
  if (text) m.thinking = (m.thinking ?? '') + text;
}

/** Text of a tool_result/function output that may be a string or an array of content parts. */
export function blockText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return content === undefined || content === null ? '' : JSON.stringify(content);
  return content
    .map((p) => (isObj(p) && typeof p.text === 'string' ? p.text : isObj(p) ? `[${String(p.type)}]` : ''))
    .join('\n');
}
