/** Small validators shared by the inbound parsers: each throws GatewayError(400) naming the field. */
import { invalidRequest } from '../errors';
import type { Obj } from '../canonical';

/** Characters and images counted while parsing, for the input-token estimate. */
export class Counter {
  chars = 0;
  images = 0;
}

export function str(v: unknown, where: string): string {
  if (typeof v !== 'string') throw invalidRequest(`${where}: expected a string`);
  return v;
}

export function nonEmptyStr(v: unknown, where: string): string {
  const s = str(v, where);
  if (s.length === 0) throw invalidRequest(`${where}: must not be empty`);
  return s;
}

export function optNumber(body: Obj, key: string, min: number, max: number): number | undefined {
  const v = body[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < min || v > max)
    throw invalidRequest(`${key}: expected a number between ${min} and ${max}`);
  return v;
}

