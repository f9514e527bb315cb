import { parseWindow } from '../../../query/params';

/** The instants a window may name: [1970, 2200), with `to` as the open end allowed to be 2200 itself. */
test.each([
  ['2199-12-31T00:00:00Z', '2200-01-01T00:00:00Z', null],
  ['1970-01-01T00:00:00Z', '1970-01-02T00:00:00Z', null],
  ['2200-01-01T00:00:00Z', '2200-01-02T00:00:00Z', 'from: must lie between 1970 and 2200'],
  ['2199-12-31T00:00:00Z', '2200-01-01T00:00:00.001Z', 'to: must lie between 1970 and 2200'],
  ['1969-12-31T23:59:59Z', '1970-01-02T00:00:00Z', 'from: must lie between 1970 and 2200'],
])('from %s to %s', (from, to, refusal) => {
  if (refusal === null) expect(parseWindow({ from, to })).toEqual({ kind: 'range', from: Date.parse(from), to: Date.parse(to) });
  else expect(() => parseWindow({ from, to })).toThrow(refusal);
});
