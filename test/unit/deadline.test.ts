import { settlesWithin } from '../../core/deadline';

/** The one race against a timer (reports waiting for the start-up catch-up, queue adds, start-up scheduling). */
test('a promise that resolves or rejects in time settles; one that takes longer does not', async () => {
  expect(await settlesWithin(Promise.resolve(1), 50)).toBe(true);
  expect(await settlesWithin(Promise.reject(new Error('x')), 50)).toBe(true);
  const slow = new Promise((r) => setTimeout(r, 200));
  expect(await settlesWithin(slow, 20)).toBe(false);
});
