/** `sluice serve` — not built yet. */
export async function run(_argv: string[]): Promise<number> {
  process.stderr.write('sluice serve: not available yet\n');
  return 1;
}
