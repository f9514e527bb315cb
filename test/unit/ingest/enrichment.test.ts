import crawlers from 'crawler-user-agents';
import { isbot } from 'isbot';
import { channelOf, CHANNEL_RULES } from '../../../ingest/enrich/channel';
import { geoLookup } from '../../../ingest/enrich/geo';
import { trafficSource } from '../../../ingest/enrich/referrer';
import { pageFields } from '../../../ingest/enrich/url';
import { parseUserAgent } from '../../../ingest/enrich/user-agent';

/** Enrichment tables: what the libraries and the vendored data make of known inputs. */

describe('user agents', () => {
  test.each([
    ['Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36', 'Chrome', 'Windows', 'Desktop'],
    ['Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15', 'Safari', 'macOS', 'Desktop'],
    ['Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0', 'Firefox', 'Linux', 'Desktop'],
    ['Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36 Edg/124.0.0.0', 'Microsoft Edge', 'Windows', 'Desktop'],
    ['Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1', 'Safari', 'iOS', 'Mobile'],
    ['Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36', 'Chrome', 'Android', 'Mobile'],
    ['Mozilla/5.0 (iPad; CPU OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1', 'Safari', 'iOS', 'Tablet'],
    ['Mozilla/5.0 (Linux; Android 10; SM-T510) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36', 'Chrome', 'Android', 'Tablet'],
    ['Mozilla/5.0 (Web0S; Linux/SmartTV) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/79.0.3945.79 Safari/537.36 WebAppManager', 'WebOS Browser', 'WebOS', 'TV'],
  ])('%s', (ua, browser, os, device) => {
    expect(parseUserAgent(ua)).toMatchObject({ browser, os, device, is_bot: 0, bot_kind: '' });
  });

  test('versions are major.minor; Windows uses its marketing version', () => {
    expect(parseUserAgent('Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.6367.91 Safari/537.36'))
      .toMatchObject({ browser_version: '124.0', os_version: '10' });
  });
});

describe('bots', () => {
  test.each([
    ['Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)', 'search_engine', 'Googlebot', 'Google'],
    ['Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)', 'search_engine', 'Bingbot', 'Microsoft'],
    ['Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)', 'ai_training', 'GPTBot', 'OpenAI'],
    ['Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ChatGPT-User/1.0; +https://openai.com/bot)', 'ai_user_fetch', 'ChatGPT-User', 'OpenAI'],
    ['Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; OAI-SearchBot/1.0; +https://openai.com/searchbot)', 'ai_search', 'OAI-SearchBot', 'OpenAI'],
    ['Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)', 'ai_training', 'ClaudeBot', 'Anthropic'],
    ['Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Claude-User/1.0; +Claude-User@anthropic.com)', 'ai_user_fetch', 'Claude-User', 'Anthropic'],
    ['Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; PerplexityBot/1.0; +https://perplexity.ai/perplexitybot)', 'ai_search', 'PerplexityBot', 'Perplexity'],
    ['Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Perplexity-User/1.0; +https://perplexity.ai/perplexity-user)', 'ai_user_fetch', 'Perplexity-User', 'Perplexity'],
    ['CCBot/2.0 (https://commoncrawl.org/faq/)', 'ai_training', 'CCBot', 'Common Crawl'],
    ['Mozilla/5.0 (compatible; AhrefsBot/7.0; +http://ahrefs.com/robot/)', 'seo', 'AhrefsBot', 'Ahrefs'],
    ['Mozilla/5.0 (compatible; YandexBot/3.0; +http://yandex.com/bots)', 'search_engine', 'YandexBot', 'Yandex'],
    ['Mozilla/5.0 (compatible; UptimeRobot/2.0; http://www.uptimerobot.com/)', 'monitoring', 'UptimeRobot', 'UptimeRobot'],
    ['facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)', 'social_preview', 'facebookexternalhit', 'Meta'],
    ['Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)', 'social_preview', 'Slackbot', 'Slack'],
    ['curl/8.5.0', 'http_library', 'curl', 'curl.haxx.se'],
    ['python-requests/2.31.0', 'http_library', 'python-requests', ''],
    ['Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/124.0.0.0 Safari/537.36', 'automation', 'HeadlessChrome', ''],
  ])('%s', (ua, kind, name, operator) => {
    expect(parseUserAgent(ua)).toMatchObject({ is_bot: 1, bot_kind: kind, crawler_name: name, crawler_operator: operator });
  });

  test.each([
    ['Mozilla/5.0 (compatible) AI2Bot (+https://www.allenai.org/crawler)', 'ai_training', 'AI2Bot', 'Allen Institute for AI'],
    ['Mozilla/5.0 (compatible; TavilyBot/1.0)', 'ai_training', 'TavilyBot', 'Tavily'],
    ['img2dataset/1.45.0 (+https://github.com/rom1504/img2dataset)', 'ai_training', 'img2dataset', ''],
  ])('an AI crawler whose library url is a bot directory or a code host gets its operator or none, never the directory: %s', (ua, kind, name, operator) => {
    expect(parseUserAgent(ua)).toMatchObject({ is_bot: 1, bot_kind: kind, crawler_name: name, crawler_operator: operator });
  });

  test('no crawler of the library is shown as operated by a bot directory or a code host', () => {
    const directories = ['datadome.co', 'knownagents.com', 'darkvisitors.com', 'github.com', 'gitlab.com'];
    const samples = crawlers.flatMap((c) => c.instances ?? []).filter((ua) => isbot(ua));
    expect(samples.length).toBeGreaterThan(500);
    const shown = samples.map((ua) => parseUserAgent(ua).crawler_operator).filter((op) => directories.includes(op));
    expect(shown).toEqual([]);
  });

  test('a request without a user agent is a bot', () => {
    expect(parseUserAgent('')).toMatchObject({ is_bot: 1, bot_kind: 'other_bot' });
  });
});

describe('referrers to source and channel', () => {
  const page = (query = '') => pageFields(new URL(`https://site.example/landing${query}`));
  test.each([
    ['', '', '', '', 'Direct'],
    ['https://www.google.com/search?q=x', '', 'google.com', 'Google', 'Organic Search'],
    ['https://www.google.co.uk/', '', 'google.co.uk', 'Google', 'Organic Search'],
    ['https://duckduckgo.com/', '', 'duckduckgo.com', 'DuckDuckGo', 'Organic Search'],
    ['https://news.ycombinator.com/item?id=1', '', 'news.ycombinator.com', 'Hacker News', 'Organic Social'],
    ['https://t.co/abc', '', 't.co', 'Twitter', 'Organic Social'],
    ['https://l.facebook.com/', '', 'l.facebook.com', 'Facebook', 'Organic Social'],
    ['https://m.youtube.com/watch', '', 'm.youtube.com', 'YouTube', 'Organic Video'],
    ['https://www.amazon.com/dp/1', '', 'amazon.com', 'Amazon', 'Organic Shopping'],
    ['https://chatgpt.com/', '', 'chatgpt.com', 'ChatGPT', 'AI Assistants'],
    ['https://www.perplexity.ai/search', '', 'perplexity.ai', 'Perplexity', 'AI Assistants'],
    ['https://claude.ai/chat/1', '', 'claude.ai', 'Claude', 'AI Assistants'],
    ['https://gemini.google.com/app', '', 'gemini.google.com', 'Gemini', 'AI Assistants'],
    ['https://copilot.microsoft.com/', '', 'copilot.microsoft.com', 'Microsoft Copilot', 'AI Assistants'],
    ['https://mail.google.com/', '', 'mail.google.com', 'Gmail', 'Email'],
    ['https://blog.someone.example/post', '', 'blog.someone.example', 'blog.someone.example', 'Referral'],
    ['', '?utm_source=chatgpt.com', '', 'ChatGPT', 'AI Assistants'],
    ['', '?utm_source=newsletter&utm_medium=email', '', 'newsletter', 'Email'],
    ['https://www.google.com/', '?utm_source=google&utm_medium=cpc&utm_campaign=brand', 'google.com', 'Google', 'Paid Search'],
    ['https://www.google.com/', '?gclid=abc', 'google.com', 'Google', 'Paid Search'],
    ['', '?gad_campaignid=123', '', 'Google', 'Paid Search'],
    ['', '?utm_source=facebook&utm_medium=paid_social', '', 'Facebook', 'Paid Social'],
    ['', '?utm_source=youtube&utm_medium=cpc', '', 'YouTube', 'Paid Video'],
    ['', '?utm_source=amazon&utm_medium=ppc', '', 'Amazon', 'Paid Shopping'],
    ['', '?utm_source=partner&utm_medium=cpc&utm_campaign=summer-shop', '', 'partner', 'Paid Shopping'],
    ['', '?utm_source=adnet&utm_medium=display', '', 'adnet', 'Display'],
    ['', '?utm_source=adnet&utm_medium=cpc', '', 'adnet', 'Paid Other'],
    ['', '?utm_source=partner&utm_medium=cpc&utm_campaign=cross-network-q3', '', 'partner', 'Cross-network'],
    ['', '?utm_source=partner&utm_medium=affiliate', '', 'partner', 'Affiliates'],
    ['', '?utm_source=podcast&utm_medium=audio', '', 'podcast', 'Audio'],
    ['', '?utm_source=sms&utm_medium=text', '', 'sms', 'SMS'],
    ['', '?utm_source=app&utm_medium=web-push', '', 'app', 'Mobile Push Notifications'],
    ['', '?utm_source=somewhere&utm_medium=weird', '', 'somewhere', 'Unassigned'],
    // A manual source replaces the referrer (GA4): without utm_medium the medium is (not set).
    ['https://www.google.com/', '?utm_source=news', 'google.com', 'news', 'Unassigned'],
    ['https://blog.someone.example/post', '?utm_source=news', 'blog.someone.example', 'news', 'Unassigned'],
    ['https://mail.google.com/', '?utm_source=digest', 'mail.google.com', 'digest', 'Unassigned'],
    ['https://www.bing.com/', '?utm_source=google', 'bing.com', 'Google', 'Organic Search'],
    ['', '?utm_source=news', '', 'news', 'Unassigned'],
  ])('%s %s', (referrer, query, host, source, channel) => {
    expect(trafficSource(page(query), referrer || undefined, 'site.example')).toEqual({ referrer: host, referrer_source: source, channel });
  });

  test('self-referrals (same host or inside the site domain) are direct', () => {
    expect(trafficSource(page(), 'https://www.site.example/other', 'site.example').channel).toBe('Direct');
    expect(trafficSource(page(), 'https://docs.site.example/', 'site.example')).toEqual({ referrer: '', referrer_source: '', channel: 'Direct' });
  });

  test('GA4 rule order: a paid medium wins over the source category, AI Assistants over organic search', () => {
    const names = CHANNEL_RULES.map(([name]) => name);
    expect(names.indexOf('Paid Search')).toBeLessThan(names.indexOf('Organic Search'));
    expect(names.indexOf('AI Assistants')).toBeLessThan(names.indexOf('Organic Search'));
    expect(names.indexOf('Organic Social')).toBeLessThan(names.indexOf('Referral'));
    expect(channelOf({ source: 'gemini.google.com', medium: 'referral', campaign: '', category: 'ai' })).toBe('AI Assistants');
    expect(channelOf({ source: 'chatgpt.com', medium: 'cpc', campaign: '', category: 'ai' })).toBe('Paid Other');
  });
});

describe('geo', () => {
  const geo = geoLookup();
  test.each([
    ['81.2.69.160', 'GB', 'England', 'London'],
    ['8.8.8.8', 'US', 'California', 'Mountain View'],
    ['1.1.1.1', 'AU', 'New South Wales', 'Sydney'],
    ['89.160.20.112', 'SE', 'Stockholm', 'Stockholm'],
    ['::ffff:81.2.69.160', 'GB', 'England', 'London'],
    ['2a00:1450:4001:80b::200e', 'DE', 'Hesse', 'Frankfurt am Main'],
  ])('%s', (ip, country, region, city) => {
    expect(geo.lookup(ip)).toEqual({ country, region, city });
  });

  test('private, loopback and malformed addresses have no geo', () => {
    for (const ip of ['127.0.0.1', '10.1.2.3', '::1', 'not-an-ip']) expect(geo.lookup(ip).country).toBe('');
  });
});
