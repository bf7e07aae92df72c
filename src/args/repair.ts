import { JsonScanner } from './scanner';

/**
 * Repair the argument text of a call cut short by `max_tokens` / `length` (SPEC §5.7): keep
 * every member that arrived complete, drop the incomplete trailing member, close the open
 * containers. Linear time: one scanner pass to check that the text is a valid JSON prefix, one
 * pass to find the cut, one `JSON.parse` of the result.
 *
 * Rules (decided here, tested in test/args/repair.test.ts):
 * - The text must be a valid prefix of a JSON **object**; a grammar error, trailing garbage or a
 *   non-object top level gives `undefined`. A text that is already a complete object is returned
 *   as parsed (nothing to repair).
 * - A member (or array element) survives when its value ended before the cut: a closed string,
 *   a closed container, a whole `true`/`false`/`null`, or a number followed by a delimiter or
 *   whitespace. A number that runs to the very end of the text may have been cut (`12` of
 *   `1234`) and is dropped; so are unterminated strings, partial literals, and keys without a
 *   value.
 * - Nested truncation: the innermost open container keeps its complete members and is closed
 *   (`{"a": {"b": 1, "c": "tr` → `{"a":{"b":1}}`). An open container that keeps **no** complete
 *   member is itself incomplete and is dropped from its parent, level by level
 *   (`{"x": 1, "a": {"b": "tr` → `{"x":1}`; `{"edits": [{"old": "ab` → nothing), so repair
 *   never invents empty objects or arrays that the model did not finish writing.
 * - `undefined` when no member of the top-level object survives (`{"label": "cut` → undefined,
 *   as Dynamo's `test_stream_suppresses_length_tool_call_without_recoverable_input`).
 */
export function repairTruncated(text: string): Record<string, unknown> | undefined {
  const scanner = new JsonScanner();
  scanner.push(text);
  if (scanner.topLevel !== 'object') return undefined;
  const status = scanner.status;
  if (status === 'invalid' || status === 'empty') return undefined;
  if (status === 'closed') return parseObject(text);

  const cut = findCut(text);
  if (cut === undefined) return undefined;
  return parseObject(cut);
}

/** Frame of an open container while walking a valid JSON prefix. */
interface Frame {
  isObject: boolean;
  /** Offset just after the last complete member / element; -1 while none. */
  cut: number;
}

/**
 * Walk a text known to be a valid, incomplete JSON-object prefix and build the repaired text,
 * or undefined when nothing survives.
 */
function findCut(text: string): string | undefined {
  const n = text.length;
  const stack: Frame[] = [];
  let inString = false;
  let stringIsValue = false;
  /** In an object, whether the current member has passed its ':' (its next string is a value). */
  const afterColon: boolean[] = [];
  let scalarStart = -1; // start of a number / literal run in progress

  const complete = (end: number): void => {
    if (stack.length > 0) stack[stack.length - 1].cut = end;
  };

  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c /* \ */) {
        i++; // skip the escaped character (for \uXXXX the hex digits are plain characters)
      } else if (c === 0x22 /* " */) {
        inString = false;
        if (stringIsValue) complete(i + 1);
      }
      continue;
    }
    if (scalarStart >= 0) {
      // A number or literal run continues until a delimiter or whitespace.
      if (isScalarChar(c)) continue;
      scalarStart = -1;
      complete(i);
    }
    switch (c) {
      case 0x22: {
        inString = true;
        const depth = stack.length;
        stringIsValue = depth > 0 && (!stack[depth - 1].isObject || afterColon[depth - 1]);
        break;
      }
      case 0x7b /* { */:
      case 0x5b /* [ */:
        stack.push({ isObject: c === 0x7b, cut: -1 });
        afterColon[stack.length - 1] = false;
        break;
      case 0x7d /* } */:
      case 0x5d /* ] */:
        stack.pop();
        complete(i + 1);
        break;
      case 0x3a /* : */:
        afterColon[stack.length - 1] = true;
        break;
      case 0x2c /* , */:
        afterColon[stack.length - 1] = false;
        break;
      default:
        if (isScalarChar(c)) scalarStart = i;
        break;
    }
  }
  if (scalarStart >= 0) {
    // A run at the very end: a whole literal is complete; a number may have been cut.
    const run = text.slice(scalarStart);
    if (run === 'true' || run === 'false' || run === 'null') complete(n);
  }

  // The deepest open container that kept a complete member decides the cut; every deeper
  // container (and the member holding it) is dropped.
  for (let k = stack.length - 1; k >= 0; k--) {
    if (stack[k].cut < 0) continue;
    let out = text.slice(0, stack[k].cut);
    for (let j = k; j >= 0; j--) out += stack[j].isObject ? '}' : ']';
    return out;
  }
  return undefined;
}

/** Characters of numbers and literals (the text is already known to be a valid prefix). */
function isScalarChar(c: number): boolean {
  return (
    (c >= 0x30 && c <= 0x39) || // 0-9
    c === 0x2d || // -
    c === 0x2b || // +
    c === 0x2e || // .
    (c >= 0x61 && c <= 0x7a) || // a-z (true false null, e)
    c === 0x45 // E
  );
}

function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
    return value as Record<string, unknown>;
  } catch {
    return undefined;
  }
}
