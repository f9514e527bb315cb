import type { Tenant, TestService } from './harness';

/**
 * What the integration suites share: polling for a state the workers reach on their own, and the
 * site's connection as GET /integrations shows it.
 */
export async function until<T>(what: string, read: () => Promise<T>, ok: (v: T) => boolean, ms = 30_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (ok(v)) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export const listIntegrations = (svc: TestService, t: Tenant, token = t.token) => svc.api('GET', '/integrations', { token });

/** The tenant's site's connection on GET /integrations, or undefined. */
export const connectionOf = async (svc: TestService, t: Tenant) =>
  (await listIntegrations(svc, t)).body.data.find((c: { site_id: string }) => c.site_id === t.siteId);

export const backfillState = (svc: TestService, t: Tenant, state: string) =>
  until(`backfill ${state}`, () => connectionOf(svc, t), (c) => c?.backfill.state === state);
