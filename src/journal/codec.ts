/**
 * The on-disk line format of the file store: `<crc32 as 8 hex digits> <record JSON>\n`, the CRC
 * taken over the UTF-8 bytes of the JSON. A line that does not end in `\n`, or whose checksum or
 * JSON does not match, is torn when it is the last one (a crash mid-write: ignored and cut off
 * before the next append) and corruption anywhere else (reported, never silently skipped).
 */
import { JsonScanner } from '../args/scanner';
import { crc32 } from './crc32';
import { isJournalRecord, JournalError, type JournalRecord } from './records';

/**
 * The deepest JSON nesting a stored record may have (the record object itself is level 1). Checked
 * with the linear JsonScanner before `JSON.parse`: a record nested 200,000 deep would parse (V8's
 * parser is iterative) but overflow the stack of every later walk (`JSON.stringify`, structuredClone).
 */
export const MAX_RECORD_DEPTH = 512;

/** Throws JournalError('corrupt') when `json` nests deeper than MAX_RECORD_DEPTH. */
export function checkRecordDepth(json: string, label: string, n: number): void {
  const sc = new JsonScanner();
  sc.push(json);
  if (sc.maxNesting > MAX_RECORD_DEPTH)
    throw new JournalError(`${label}: record ${n} nests deeper than ${MAX_RECORD_DEPTH} levels`, 'corrupt', { record: n });
}

/** Bytes a line adds to its record's JSON: 8 hex digits of CRC, a space, the newline. */
export const LINE_OVERHEAD = 10;

export function encodeRecord(rec: JournalRecord): Buffer {
  const json = Buffer.from(JSON.stringify(rec), 'utf8');
  const head = Buffer.from(crc32(json).toString(16).padStart(8, '0') + ' ', 'ascii');
  return Buffer.concat([head, json, NEWLINE]);
}

const NEWLINE = Buffer.from('\n');

export interface DecodedJournal {
  records: JournalRecord[];
  /** Byte length of the intact prefix (where the next append goes). */
  validBytes: number;
  tornBytes: number;
}

function decodeLine(buf: Buffer, start: number, end: number, label: string, n: number): JournalRecord | undefined {
  if (end - start < 10 || buf[start + 8] !== 0x20) return undefined;
  const want = Number.parseInt(buf.toString('ascii', start, start + 8), 16);
  if (!Number.isFinite(want) || crc32(buf, start + 9, end) !== want) return undefined;
  const json = buf.toString('utf8', start + 9, end);
  checkRecordDepth(json, label, n); // intact but too deep: corrupt wherever it is, never "torn"
  try {
    const v: unknown = JSON.parse(json);
    return isJournalRecord(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

/** Decode a journal file. Throws JournalError('corrupt') for a bad record before the last one. */
export function decodeJournal(buf: Buffer, label = 'journal'): DecodedJournal {
  const records: JournalRecord[] = [];
  let pos = 0;
  while (pos < buf.length) {
    const nl = buf.indexOf(0x0a, pos);
    if (nl < 0) break; // no newline: a torn last record
    const rec = decodeLine(buf, pos, nl, label, records.length);
    if (!rec || rec.n !== records.length) {
      if (nl + 1 >= buf.length) break; // the last line: torn
      throw new JournalError(`${label}: record ${records.length} (byte ${pos}) is corrupt and is not the last one`, 'corrupt', { record: records.length });
    }
    records.push(rec);
    pos = nl + 1;
  }
  return { records, validBytes: pos, tornBytes: buf.length - pos };
}
