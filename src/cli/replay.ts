/** `sluice replay` — not built yet. */
export async function run(_argv: string[]): Promise<number> {
  process.stderr.write('sluice replay: not available yet\n');
  return 1;
}
