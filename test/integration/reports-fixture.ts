import { FIREFOX, GPTBOT, IPHONE, type Line } from './reports-support';

/**

 * The hand-counted fixture of the report suites, now = Wed 2026-05-20 12:00 UTC,
 * window last7d = [2026-05-14, 2026-05-21) UTC.
 *  A: first seen 05-10 (returning); session 05-18 10:00-10:03: 2 pageviews + Signup (1500 cents).
 *  B: new; session 05-19 08:00 one pageview (a bounce); session 05-19 15:00 pageview + exit_link 3 s later.
 *  C: new, iPhone; session 05-20 11:00-11:10: pageview, file_download, pageview.
 *  GPTBot: two pageviews 05-19 12:00 and 12:05.
 */
export const FIXTURE: Line[] = [
  { ts: '2026-05-10T09:00:00Z', visitor: 'A', path: '/', country: 'FR' },
  { ts: '2026-05-18T10:00:00Z', visitor: 'A', path: '/', referrer: 'https://www.google.com/search?q=tally', country: 'FR' },
  { ts: '2026-05-18T10:02:00Z', visitor: 'A', path: '/pricing', country: 'FR' },
  { ts: '2026-05-18T10:03:00Z', visitor: 'A', path: '/pricing', name: 'Signup', value_cents: 1500, country: 'FR' },
  { ts: '2026-05-19T08:00:00Z', visitor: 'B', path: '/blog/hello', referrer: 'https://news.ycombinator.com/item?id=1', user_agent: FIREFOX, country: 'DE', region: 'Bavaria', city: 'Munich' },
  { ts: '2026-05-19T15:00:00Z', visitor: 'B', path: '/', query: 'utm_source=newsletter&utm_medium=email&utm_campaign=spring&utm_term=tally', user_agent: FIREFOX, country: 'DE', region: 'Bavaria', city: 'Munich' },
  { ts: '2026-05-19T15:00:03Z', visitor: 'B', path: '/', name: 'exit_link', link: 'https://github.com/tally', user_agent: FIREFOX, country: 'DE', region: 'Bavaria', city: 'Munich' },
  { ts: '2026-05-20T11:00:00Z', visitor: 'C', path: '/docs/a', user_agent: IPHONE, country: 'US', region: 'California', city: 'San Francisco' },
  { ts: '2026-05-20T11:01:00Z', visitor: 'C', path: '/docs/a', name: 'file_download', link: 'https://files.example/a.pdf', user_agent: IPHONE, country: 'US', region: 'California', city: 'San Francisco' },
  { ts: '2026-05-20T11:10:00Z', visitor: 'C', path: '/docs/b', user_agent: IPHONE, country: 'US', region: 'California', city: 'San Francisco' },
  { ts: '2026-05-19T12:00:00Z', path: '/', user_agent: GPTBOT, ip: '20.171.206.1' },
  { ts: '2026-05-19T12:05:00Z', path: '/pricing', user_agent: GPTBOT, ip: '20.171.206.1' },
];

