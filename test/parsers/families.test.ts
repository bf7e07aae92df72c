/**
 * Every family of the first set, on its synthetic stream (test/parsers/cases.ts), through the
 * shared family suite (test/parsers/familySuite.ts) that the newer families use too:
 * - whole (arguments are JSON, no warnings), at EVERY byte split (two chunks, through the byte
 *   entry and its streaming decoder), at every UTF-16 split, and in random 1–16 byte chunks
 *   (fast-check): identical merged events, no marker text in text/thinking;
 * - completion evidence exactly at each call's closing marker: the push whose chunk holds the
 *   marker's last byte returns `call.complete`, no earlier push does;
 * - every truncated prefix (SPEC §5.7): calls whose closing marker is not complete get no
 *   `call.complete`, fragments so far are a prefix of the final arguments, text and thinking are
 *   prefixes of the full ones (plus, at most, a held partial marker that could not become markup).
 */
import { CASES } from './cases';
import { describeFamilyStreams } from './familySuite';

describeFamilyStreams(CASES, { randomRuns: 150 });
