import { conditionHolds, nextEdge } from '../../model/alerts-rules';

test.each([
  ['visitors_spike', 'absolute', 100, { current: 100 }, true],
  ['visitors_spike', 'absolute', 100, { current: 99 }, false],
  ['goal', 'absolute', 1, { current: 1 }, true],
  ['revenue', 'absolute', 5000, { current: 4999 }, false],
  ['traffic_drop', 'absolute', 10, { current: 10 }, true],
  ['traffic_drop', 'absolute', 10, { current: 11 }, false],
  ['visitors_spike', 'percent_change', 50, { current: 150, previous: 100 }, true],
  ['visitors_spike', 'percent_change', 50, { current: 149, previous: 100 }, false],
  ['visitors_spike', 'percent_change', 50, { current: 5, previous: 0 }, false],
  ['traffic_drop', 'percent_change', 40, { current: 60, previous: 100 }, true],
  ['traffic_drop', 'percent_change', 40, { current: 61, previous: 100 }, false],
  ['traffic_drop', 'percent_change', 40, { current: 0, previous: 0 }, false],
] as const)('%s %s threshold %d with %j holds: %s', (trigger_type, threshold_mode, threshold, m, holds) => {
  expect(conditionHolds({ trigger_type, threshold_mode, threshold }, m)).toBe(holds);
});

test('edge-triggered: fires entering the condition only, re-arms when it stops holding', () => {
  expect(nextEdge(false, true)).toEqual({ fire: true, firing: true });
  expect(nextEdge(true, true)).toEqual({ fire: false, firing: true });
  expect(nextEdge(true, false)).toEqual({ fire: false, firing: false });
  expect(nextEdge(false, false)).toEqual({ fire: false, firing: false });
});
