import { trafficSource } from '../enrich/referrer';
import { pageFields } from '../enrich/url';
import { parseUserAgent } from '../enrich/user-agent';

/**
 * The traffic profile `tally seed` draws from. Weights are shares; every derived column (channel,
 * source, browser, bot kind) is computed here by the real enrichment code, so seeded rows look exactly
 * like ingested ones. The SQL receives each table as parallel Array params plus cumulative weights.
 */
type Weighted<T> = readonly (readonly [weight: number, value: T])[];

export interface Table {
  cumulative: number[];
  columns: Record<string, string[]>;
}

function table<T>(rows: Weighted<T>, columns: (v: T) => Record<string, string>): Table {
  const total = rows.reduce((s, [w]) => s + w, 0);
  let acc = 0;
  const cumulative = rows.map(([w]) => (acc += w / total));
  cumulative[cumulative.length - 1] = 1;
  const out: Record<string, string[]> = {};
  for (const [, v] of rows) for (const [k, x] of Object.entries(columns(v))) (out[k] ??= []).push(x);
  return { cumulative, columns: out };
}

const ACQUISITION: Weighted<[referrer: string, query: string]> = [
  [34, ['', '']],
  [26, ['https://www.google.com/', '']],
  [3, ['https://www.bing.com/', '']],
  [2, ['https://duckduckgo.com/', '']],
  [4, ['https://chatgpt.com/', 'utm_source=chatgpt.com']],
  [1.5, ['https://www.perplexity.ai/', '']],
  [0.5, ['https://claude.ai/', '']],
  [4, ['https://news.ycombinator.com/', '']],
  [3, ['https://www.reddit.com/', '']],
  [2.5, ['https://t.co/', '']],
  [1.5, ['https://www.linkedin.com/', '']],
  [2, ['https://www.youtube.com/', '']],
  [3, ['https://github.com/', '']],
  [1.5, ['https://dev.to/', '']],
  [1, ['https://www.producthunt.com/', '']],
  [4, ['', 'utm_source=newsletter&utm_medium=email&utm_campaign=weekly-digest']],
  [3, ['https://www.google.com/', 'utm_source=google&utm_medium=cpc&utm_campaign=brand&utm_term=web+analytics&gad_campaignid=20394817&gclid=seed']],
  [1.5, ['https://l.facebook.com/', 'utm_source=facebook&utm_medium=paid_social&utm_campaign=retargeting']],
  [1, ['https://www.amazon.com/', '']],
];

export const acquisition = table(ACQUISITION, ([ref, query]) => {
  const page = pageFields(new URL(`https://seed.invalid/?${query}`));
  const src = trafficSource(page, ref || undefined, 'seed.invalid');
  return {
    referrer: src.referrer, referrer_source: src.referrer_source, channel: src.channel,
    utm_source: page.utm_source, utm_medium: page.utm_medium, utm_campaign: page.utm_campaign, utm_term: page.utm_term,
    gad_campaign_id: page.gad_campaign_id, gclid: page.gclid,
  };
});

const PLACES: Weighted<[country: string, region: string, city: string]> = [
  [14, ['US', 'California', 'San Francisco']], [8, ['US', 'New York', 'New York']], [5, ['US', 'Texas', 'Austin']],
  [8, ['GB', 'England', 'London']], [7, ['DE', 'Berlin', 'Berlin']], [3, ['DE', 'Bavaria', 'Munich']],
  [6, ['FR', 'Ile-de-France', 'Paris']], [7, ['IN', 'Karnataka', 'Bengaluru']], [4, ['CA', 'Ontario', 'Toronto']],
  [4, ['NL', 'North Holland', 'Amsterdam']], [4, ['BR', 'Sao Paulo', 'Sao Paulo']], [3, ['AU', 'New South Wales', 'Sydney']],
  [3, ['ES', 'Madrid', 'Madrid']], [3, ['JP', 'Tokyo', 'Tokyo']], [2, ['SE', 'Stockholm', 'Stockholm']],
  [2, ['PL', 'Mazovia', 'Warsaw']], [2, ['IT', 'Lombardy', 'Milan']], [2, ['', '', '']],
];
export const places = table(PLACES, ([country, region, city]) => ({ country, region, city }));

const CLIENTS: Weighted<string> = [
  [30, 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36'],
  [14, 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15'],
  [8, 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36'],
  [6, 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36 Edg/124.0.0.0'],
  [5, 'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0'],
  [3, 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:125.0) Gecko/20100101 Firefox/125.0'],
  [17, 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1'],
  [12, 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36'],
  [2, 'Mozilla/5.0 (Linux; Android 14; SM-S921B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/24.0 Chrome/117.0.0.0 Mobile Safari/537.36'],
  [2.5, 'Mozilla/5.0 (iPad; CPU OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1'],
  [0.5, 'Mozilla/5.0 (Web0S; Linux/SmartTV) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/79.0.3945.79 Safari/537.36 WebAppManager'],
];

const BOTS: Weighted<string> = [
  [25, 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)'],
  [8, 'Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)'],
  [14, 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)'],
  [8, 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)'],
  [5, 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ChatGPT-User/1.0; +https://openai.com/bot)'],
  [4, 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; OAI-SearchBot/1.0; +https://openai.com/searchbot)'],
  [4, 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; PerplexityBot/1.0; +https://perplexity.ai/perplexitybot)'],
  [6, 'Mozilla/5.0 (compatible; AhrefsBot/7.0; +http://ahrefs.com/robot/)'],
  [5, 'Mozilla/5.0 (compatible; UptimeRobot/2.0; http://www.uptimerobot.com/)'],
  [4, 'facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)'],
  [5, 'curl/8.5.0'],
  [3, 'Mozilla/5.0 (compatible; Bytespider; spider-feedback@bytedance.com)'],
];

const clientColumns = (ua: string) => {
  const c = parseUserAgent(ua);
  return {
    browser: c.browser, browser_version: c.browser_version, os: c.os, os_version: c.os_version, device: c.device,
    bot_kind: c.bot_kind, crawler_name: c.crawler_name, crawler_operator: c.crawler_operator,
  };
};
export const clients = table(CLIENTS, clientColumns);
export const bots = table(BOTS, clientColumns);

/** Ranks 0..9 get these names; the long tail is generated as /blog|docs|products/item-<rank>. */
export const TOP_PATHS = ['/', '/pricing', '/features', '/blog', '/docs', '/about', '/signup', '/login', '/contact', '/changelog'];
export const PATH_COUNT = 400;

/** Share of sessions by local hour of day (a working-hours curve). */
export const HOURS = table(
  [1, 0.7, 0.5, 0.4, 0.4, 0.6, 1, 2, 3.5, 4.5, 5, 5.2, 5, 5, 5.2, 5, 4.6, 4, 3.4, 3, 2.8, 2.4, 1.8, 1.3].map((w, h) => [w, String(h)] as const),
  (h) => ({ hour: h }),
);

export const BOT_SHARE = 0.08;
export const RETURNING_VISITOR_RATIO = 0.55; // distinct visitors per session
