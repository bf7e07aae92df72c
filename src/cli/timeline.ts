import type { ReplayReport } from '../trace/replay';
import { UsageError } from './args';

/** Timeline charts (SVG/HTML) of a replay report. */
export function writeTimeline(_file: string, _report: ReplayReport): void {
  throw new UsageError('--timeline is not available yet');
}
