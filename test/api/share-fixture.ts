import { visitorIdFor } from '../../ingest/hash';
import type { Tenant, TestService } from '../support/harness';

/**
 * A small, varied week of traffic for share-board and widget tests (clock frozen at
 * 2026-03-10T15:00:00Z): countries, browsers, sources (search, an AI assistant, a campaign), goals,
 * a crawler, a payment, recent visitors for the live figures, and one funnel.
 */
export const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36';
const SAFARI_IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1';
const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0';
const GPTBOT = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)';

export async function boardFixture(svc: TestService, t: Tenant): Promise<void> {
  const url = (path: string) => `https://${t.domain}${path}`;
  const e = (ts: string, visitor: string, path: string, extra: Record<string, unknown> = {}) =>
    JSON.stringify({ ts, name: 'pageview', url: url(path), visitor, user_agent: CHROME, ...extra });
  const lines = [
    e('2026-03-09T10:00:00Z', 'v1', '/', { referrer: 'https://www.google.com/', country: 'DE' }),
    e('2026-03-09T10:02:00Z', 'v1', '/pricing', { country: 'DE' }),
    e('2026-03-09T10:05:00Z', 'v1', '/pricing', { name: 'Signup', country: 'DE' }),
    e('2026-03-08T12:00:00Z', 'v2', '/pricing?utm_campaign=spring&utm_source=newsletter', { user_agent: SAFARI_IPHONE, country: 'US' }),
    e('2026-03-08T12:03:00Z', 'v2', '/pricing', { name: 'Signup', user_agent: SAFARI_IPHONE, country: 'US' }),
    e('2026-03-07T09:00:00Z', 'v3', '/', { referrer: 'https://chatgpt.com/', user_agent: FIREFOX, country: 'DE' }),
    e('2026-03-07T09:01:00Z', 'v3', '/pricing', { user_agent: FIREFOX, country: 'DE' }),
    e('2026-03-10T14:55:00Z', 'v4', '/docs', { country: 'GB' }),
    e('2026-03-10T14:56:00Z', 'v5', '/', { country: 'FR' }),
    e('2026-03-10T14:40:00Z', 'v6', '/', { country: 'US' }),
    e('2026-03-09T08:00:00Z', 'bot', '/', { user_agent: GPTBOT }),
    e('2026-01-15T10:00:00Z', 'old', '/', { country: 'DE' }),
  ];
  const imported = await svc.admin('events import', { site: t.siteId }, lines.join('\n'));
  if (imported.rejected) throw new Error(`fixture import rejected lines: ${JSON.stringify(imported.errors)}`);
  // Revenue arrives from the payment provider; written as its worker would.
  await svc.running.ctx.store.insert('payments', [{
    site_id: t.siteId, provider: 'stripe', payment_id: 'pi_board', visitor_id: visitorIdFor(t.siteId, 'v1'), session_id: '0',
    amount_cents: 4200, refunded_cents: 0, currency: 'USD', status: 'succeeded', paid_at: '2026-03-09 11:00:00.000', version: 1, is_deleted: 0,
  }]);
  const funnel = await svc.api('POST', `/sites/${t.siteId}/funnels`, {
    token: t.token, body: { name: 'Pricing to signup', steps: [{ kind: 'view', value: '/pricing' }, { kind: 'goal', value: 'Signup' }] },
  });
  if (funnel.status !== 201) throw new Error(`fixture funnel: ${funnel.text}`);
}
