import fc from 'fast-check';
import { startTestService, type TestService } from '../support/harness';
import { request } from '../support/http';

/** POST /api/event: no body, however odd, gets a 5xx or a stack trace. */
let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
  await svc.tenant({ domain: 'fuzz.example' });
});
afterAll(() => svc.stop());

const scalar = fc.oneof(fc.string(), fc.integer(), fc.double(), fc.boolean(), fc.constant(null));
const field = fc.oneof(scalar, fc.jsonValue(), fc.constant('https://fuzz.example/p?utm_source=x'), fc.constant('fuzz.example'));
const payload = fc.record(
  { n: field, u: field, d: field, r: field, p: fc.oneof(field, fc.dictionary(fc.string(), scalar)), value_cents: field, visitor: field, h: field },
  { requiredKeys: [] },
);

test('random payloads are answered 202 or a 4xx naming the problem', async () => {
  await fc.assert(
    fc.asyncProperty(fc.oneof(payload, fc.jsonValue()), fc.constantFrom('application/json', 'text/plain'), async (body, type) => {
      const res = await request('POST', `${svc.base}/api/event`, { raw: JSON.stringify(body), headers: { 'content-type': type } });
      expect([202, 400, 413]).toContain(res.status);
      if (res.status !== 202) {
        expect(res.body.error.message).toEqual(expect.any(String));
        expect(res.text).not.toMatch(/at .*\.ts:\d+/);
      }
    }),
    { numRuns: 150 },
  );
});

test('random raw text is answered with a 4xx, never a 5xx', async () => {
  await fc.assert(
    fc.asyncProperty(fc.string({ maxLength: 300 }), async (text) => {
      const res = await request('POST', `${svc.base}/api/event`, { raw: text, headers: { 'content-type': 'text/plain' } });
      expect(res.status).toBeLessThan(500);
    }),
    { numRuns: 100 },
  );
});
