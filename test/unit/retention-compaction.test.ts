import { COMPACT_SHARE, compactionFor, monthEnd, type MaskedPartition } from '../../clickhouse/retention';

/** The rule that decides which partitions the retention purge compacts (clickhouse/retention.ts). */
const CUT = Date.parse('2026-04-19T00:00:00Z');
const p = (partition: string, stored: number, visible: number, monthly = true): MaskedPartition => ({ table: 'events', partition, stored, visible, monthly });

test('monthEnd reads only a strict YYYYMM id', () => {
  expect(new Date(monthEnd('202603')!).toISOString()).toBe('2026-04-01T00:00:00.000Z');
  expect(new Date(monthEnd('202612')!).toISOString()).toBe('2027-01-01T00:00:00.000Z');
  for (const bad of ['all', '202613', '202600', '20260', '2026031', "202603' OR 1", '']) expect([bad, monthEnd(bad)]).toEqual([bad, null]);
});

test('a partition is rewritten once at least a third of it is masked, not before', () => {
  expect(COMPACT_SHARE).toBeCloseTo(1 / 3);
  expect(compactionFor(p('202604', 300, 200), CUT)).toBe('mask');
  expect(compactionFor(p('202604', 300, 201), CUT)).toBeNull();
  expect(compactionFor(p('all', 90, 10, false), CUT)).toBe('mask');
  expect(compactionFor(p('202604', 300, 300), CUT)).toBeNull();
  // system.parts read before a concurrent insert: more visible than stored is nothing masked.
  expect(compactionFor(p('202604', 300, 310), CUT)).toBeNull();
});

test('nothing visible: dropped only when its whole month lies before every cutoff, else the mask is applied', () => {
  expect(compactionFor(p('202603', 500, 0), CUT)).toBe('drop');
  // April ends after the earliest cutoff: a row stored there meanwhile could be one to keep.
  expect(compactionFor(p('202604', 500, 0), CUT)).toBe('mask');
  expect(compactionFor(p('202603', 500, 0), null)).toBe('mask');
  expect(compactionFor(p('all', 500, 0, false), CUT)).toBe('mask');
  expect(compactionFor(p('202603', 0, 0), CUT)).toBeNull();
});
