import crawlers from 'crawler-user-agents';
import { isbot, isbotMatch } from 'isbot';
import overrides from '../data/crawler-overrides.json';
import { stripWww } from './url';

/**
 * Is a user agent a bot, of which kind, which crawler and whose. isbot decides "bot or not";
 * crawler-user-agents (MIT) names the crawler and tags it; data/crawler-overrides.json maps the tags
 * to Tally's bot_kind and corrects kind/name/operator where tags cannot say it (ChatGPT-User fetches
 * for a user, GPTBot trains). Nothing here is a guess written in code.
 */
export const BOT_KINDS = [
  'ai_training', 'ai_search', 'ai_user_fetch', 'search_engine', 'seo', 'monitoring', 'social_preview',
  'http_library', 'automation', 'other_bot',
] as const;
export type BotKind = (typeof BOT_KINDS)[number];
/** The kinds the `/ai/*` reports count: crawlers that train, index or fetch for an AI assistant. */
export const AI_BOT_KINDS = ['ai_training', 'ai_search', 'ai_user_fetch'] as const satisfies readonly BotKind[];

export interface BotInfo {
  is_bot: 0 | 1;
  bot_kind: BotKind | '';
  crawler_name: string;
  crawler_operator: string;
}

export const HUMAN: BotInfo = { is_bot: 0, bot_kind: '', crawler_name: '', crawler_operator: '' };

interface Override { name?: string; operator?: string; kind?: BotKind }
const OVERRIDES = overrides.crawlers as Record<string, Override>;
const KIND_RULES = overrides.kindByTags as { tags: string[]; kind: BotKind }[];
const ISBOT_ONLY = overrides.isbotOnly.map((r) => ({ re: new RegExp(r.match, 'i'), kind: r.kind as BotKind }));

const CRAWLERS = crawlers.map((c) => ({ re: new RegExp(c.pattern), pattern: c.pattern, tags: c.tags ?? [], url: c.url }));

function kindFromTags(tags: string[]): BotKind {
  return KIND_RULES.find((r) => r.tags.every((t) => tags.includes(t)))?.kind ?? 'other_bot';
}

/** Bot directories and code hosts: a crawler whose url points there has named no operator. */
const DIRECTORY_HOSTS = new Set(overrides.directoryHosts);

function operatorFromUrl(url: string | undefined): string {
  if (!url) return '';
  try {
    const host = stripWww(new URL(url).hostname);
    return DIRECTORY_HOSTS.has(host) ? '' : host;
  } catch {
    return '';
  }
}

/** The crawler's own spelling, as matched in the user agent (`Googlebot/` -> `Googlebot`). */
const cleanName = (matched: string) => matched.replace(/^[\s(;]+|[\s/;)]+$/g, '').slice(0, 100);

export function classifyBot(ua: string, bowserName = ''): BotInfo {
  if (!ua) return { is_bot: 1, bot_kind: 'other_bot', crawler_name: '', crawler_operator: '' };
  if (!isbot(ua)) return HUMAN;
  for (const c of CRAWLERS) {
    const m = c.re.exec(ua);
    if (!m) continue;
    const o = OVERRIDES[c.pattern] ?? {};
    return {
      is_bot: 1,
      bot_kind: o.kind ?? kindFromTags(c.tags),
      crawler_name: o.name ?? cleanName(m[0]),
      crawler_operator: o.operator ?? operatorFromUrl(c.url),
    };
  }
  const matched = isbotMatch(ua) ?? '';
  const kind = ISBOT_ONLY.find((r) => r.re.test(matched))?.kind ?? 'other_bot';
  return { is_bot: 1, bot_kind: kind, crawler_name: bowserName || cleanName(matched), crawler_operator: '' };
}
