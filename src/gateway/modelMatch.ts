/**
 * Model-name matching for `--model-map` patterns, in linear time.
 *
 * A pattern is literal text with `*` for any run of characters (possibly empty); nothing else is
 * special. It is matched without regular expressions: the text before the first star must begin
 * the name, the text after the last star must end it, and each segment between stars is found,
 * leftmost, after the previous one (`indexOf`). Taking the leftmost occurrence is always right for
 * star-only globs (a later occurrence leaves less room for the rest, never more), so there is no
 * backtracking: one match costs O(name · pattern) at worst, whatever the number of stars. A
 * backtracking RegExp (`^a.*b.*c$`) over a long name that almost matches took seconds per request.
 *
 * Model names are also capped (`MAX_MODEL_NAME` characters): a longer name is a 400, not work.
 * Every place the gateway matches a model name goes through `globMatches` (canonical.ts `mapModel`
 * and `patternMatches`, upstream/models.ts `findModel`).
 */
import { invalidRequest } from './errors';

/** The longest model name the gateway accepts (a client's `model`, a `GET /v1/models/{id}` id). */
export const MAX_MODEL_NAME = 256;

/** True when `pattern` (`*` = any run of characters) matches all of `name`. Linear, no backtracking. */
export function globMatches(pattern: string, name: string): boolean {
  const star = pattern.indexOf('*');
  if (star < 0) return pattern === name;
  const parts = pattern.split('*');
  const head = parts[0]!;
  const tail = parts[parts.length - 1]!;
  if (name.length < head.length + tail.length || !name.startsWith(head) || !name.endsWith(tail)) return false;
  let at = head.length;
  const stop = name.length - tail.length;
  for (let i = 1; i < parts.length - 1; i++) {
    const seg = parts[i]!;
    if (seg.length === 0) continue;
    const found = name.indexOf(seg, at);
    if (found < 0 || found + seg.length > stop) return false;
    at = found + seg.length;
  }
  return true;
}

/** A model name the gateway will match: throws the client's 400 when it is longer than MAX_MODEL_NAME. */
export function checkModelName(name: string, what = 'model'): void {
  if (name.length > MAX_MODEL_NAME) throw invalidRequest(`${what}: a model name is at most ${MAX_MODEL_NAME} characters (got ${name.length})`);
}
