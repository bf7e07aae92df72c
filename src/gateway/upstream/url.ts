/**
 * The request URL for a configured base URL and an API path tail (e.g. `chat/completions`):
 * a base already ending in the tail is used as is, a base ending in a version (`/v1`, `/api/v1`,
 * `/v1beta`) gets the tail, anything else gets `/v1/` + the tail.
 */
export function endpointUrl(base: string, tail: string): URL {
  const u = new URL(base);
  const p = u.pathname.replace(/\/+$/, '');
  if (p.endsWith(`/${tail}`)) u.pathname = p;
  else if (/\/v\d+[a-z0-9]*$/.test(p)) u.pathname = `${p}/${tail}`;
  else u.pathname = `${p}/v1/${tail}`;
  return u;
}
