import { Readable } from 'node:stream';
import { boundedLines, type Line } from '../../../ingest/import/lines';

/** Lines of an import body, each held to a cap while it arrives, whatever the chunking. */
async function lines(chunks: (string | Buffer)[], max: number): Promise<Line[]> {
  const out: Line[] = [];
  for await (const l of boundedLines(Readable.from(chunks.map((c) => (typeof c === 'string' ? Buffer.from(c) : c))), max)) out.push(l);
  return out;
}
const texts = (ls: Line[]) => ls.map((l) => (l.tooLong ? '<too long>' : l.text));

test('lines split on LF and CR LF, across chunks, with a last line without a newline', async () => {
  expect(texts(await lines(['a\r\nb', 'c\n\nd', 'e'], 100))).toEqual(['a', 'bc', '', 'de']);
  expect(texts(await lines(['a\n'], 100))).toEqual(['a']);
});

test('a character whose bytes arrive in two chunks is one character', async () => {
  const euro = Buffer.from('€\n');
  expect(texts(await lines([euro.subarray(0, 1), euro.subarray(1, 2), euro.subarray(2)], 100))).toEqual(['€']);
});

test('a line over the cap is reported once and dropped as it arrives; the lines around it are kept', async () => {
  const long = 'x'.repeat(40);
  expect(texts(await lines(['ok\n', long, long, '\nafter\r\n', long], 64))).toEqual(['ok', '<too long>', 'after', 'x'.repeat(40)]);
  expect(texts(await lines(['first\n', long, long], 64))).toEqual(['first', '<too long>']);
  // The cap counts bytes, and a CR before the newline is not the line's.
  expect(texts(await lines(['x'.repeat(64) + '\r\n', 'x'.repeat(65) + '\n'], 64))).toEqual(['x'.repeat(64), '<too long>']);
});
