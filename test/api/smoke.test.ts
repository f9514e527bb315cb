import { startTestService, type TestService } from '../support/harness';
import { request } from '../support/http';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(() => svc.stop());

test('a key made by the admin commands reads GET /sites over HTTPS', async () => {
  const t = await svc.tenant({ domain: 'smoke.example.com' });
  const res = await svc.api('GET', '/sites', { token: t.token });
  expect(res.status).toBe(200);
  expect(res.body.data.map((s: { domain: string }) => s.domain)).toEqual(['smoke.example.com']);
  expect(res.body.meta.page).toEqual({ limit: 100, offset: 0, has_more: false });
});

test('plain HTTP to /api/v1 is refused with 403 https_required, not redirected', async () => {
  const t = await svc.tenant();
  const res = await request('GET', `${svc.plainBase}/api/v1/sites`, { token: t.token });
  expect(res.status).toBe(403);
  expect(res.body.error.code).toBe('https_required');
});
