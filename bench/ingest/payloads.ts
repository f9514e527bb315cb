
/**
 * Realistic collection traffic for the benchmark: what the tracker sends (short field names, text/plain),
 * over a Zipf-like spread of paths, the seed profile's referrer mix, a browser mix and thousands of
 * visitor IPs (given by X-Forwarded-For from a trusted proxy, as behind a load balancer).
 */
const UAS = [
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1',
  'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36',
  'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0',
  'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)',
];
const REFERRERS = ['', 'https://www.google.com/', 'https://news.ycombinator.com/', 'https://chatgpt.com/', 'https://t.co/x', 'https://www.bing.com/'];

export interface BenchRequest {
  body: string;
  headers: Record<string, string>;
}

/** `count` distinct requests for `domain`, deterministic (index-based), to be sent round-robin. */
export function benchRequests(domain: string, count: number): BenchRequest[] {
  return Array.from({ length: count }, (_, i) => {
    const rank = Math.floor(Math.exp(((i * 7919) % 1000) / 1000 * Math.log(300)));
    const name = i % 25 === 0 ? 'Signup' : 'pageview';
    const payload = {
      n: name, u: `https://${domain}/docs/page-${rank}?utm_source=${i % 10 === 0 ? 'newsletter' : ''}`, d: domain,
      r: REFERRERS[i % REFERRERS.length] || null, ...(name === 'Signup' ? { p: { plan: 'pro' }, value_cents: 4900 } : {}),
    };
    const ip = `${(i * 37) % 200 + 20}.${(i * 11) % 250}.${(i * 7) % 250}.${i % 250}`;
    return {
      body: JSON.stringify(payload),
      headers: { 'content-type': 'text/plain', 'user-agent': UAS[i % UAS.length], 'x-forwarded-for': ip },
    };
  });
}
