import { isUtf8 } from 'node:buffer';
import type { Readable } from 'node:stream';

/**
 * A line of the stream: its text (CR LF ends a line too), `tooLong` when it passed the cap, or
 * `notUtf8` when its bytes are not UTF-8 (decoding would store U+FFFD in their place, silently).
 */
export type Line = { text: string; tooLong?: false; notUtf8?: false } | { text?: undefined; tooLong: true } | { text?: undefined; tooLong?: false; notUtf8: true };

const NEWLINE = 0x0a;

function lineOf(bytes: Buffer | undefined, maxBytes: number): Line {
  if (!bytes || bytes.length > maxBytes) return { tooLong: true };
  return isUtf8(bytes) ? { text: bytes.toString('utf8') } : { notUtf8: true };
}

/**
 * The stream's lines with each held to `maxBytes`: a longer line is dropped as it arrives, a chunk at
 * a time, and reported as `tooLong`. TRAP: readline holds a whole line before anyone can look at its
 * length, so one line of 700 MB without a newline ended the process (`Invalid string length`).
 */
export async function* boundedLines(input: Readable, maxBytes: number): AsyncGenerator<Line> {
  let parts: Buffer[] = [];
  let held = 0;
  let overflow = false;
  const finish = (): Line => {
    let bytes = overflow ? undefined : Buffer.concat(parts, held);
    if (bytes?.[bytes.length - 1] === 0x0d) bytes = bytes.subarray(0, -1); // CR LF ends a line too
    const line = lineOf(bytes, maxBytes);
    parts = [];
    held = 0;
    overflow = false;
    return line;
  };
  const keep = (piece: Buffer) => {
    if (overflow) return;
    if (held + piece.length > maxBytes + 1) { // + 1: a CR before the newline is not the line's (finish drops it)
      overflow = true;
      parts = [];
      held = 0;
      return;
    }
    parts.push(piece);
    held += piece.length;
  };
  for await (const chunk of input) {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
    let from = 0;
    for (let at = buf.indexOf(NEWLINE); at >= 0; at = buf.indexOf(NEWLINE, from)) {
      keep(buf.subarray(from, at));
      yield finish();
      from = at + 1;
    }
    if (from < buf.length) keep(buf.subarray(from));
  }
  if (held > 0 || overflow) yield finish();
}
