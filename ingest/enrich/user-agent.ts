import Bowser from 'bowser';
import { classifyBot, type BotInfo } from './bots';

/**
 * Browser, OS, device and bot facts of a user agent (bowser + bots.ts). Parsing costs tens of
 * microseconds and real traffic repeats a few thousand user agents, so results are kept in a small
 * LRU cache (Map insertion order): the hot path is one Map lookup.
 */
export interface ClientFields extends BotInfo {
  browser: string;
  browser_version: string;
  os: string;
  os_version: string;
  device: string;
}

const DEVICE: Record<string, string> = { desktop: 'Desktop', mobile: 'Mobile', tablet: 'Tablet', tv: 'TV', bot: 'Bot' };
/** Every device a client can be given (empty aside). */
export const DEVICES: readonly string[] = Object.values(DEVICE);
const CACHE_SIZE = 5000;
const cache = new Map<string, ClientFields>();

/** Major.minor is what reports group by; full build numbers would split every browser into hundreds. */
const majorMinor = (v: string | undefined) => (v ?? '').split('.').slice(0, 2).join('.');

function parse(ua: string): ClientFields {
  const r = ua ? Bowser.parse(ua) : undefined;
  const os = r?.os;
  // Windows reports "NT 10.0"; its marketing name ("10") is what people recognise.
  const osVersion = os?.name === 'Windows' ? os.versionName ?? '' : majorMinor(os?.version);
  const browserName = r?.browser.name ?? '';
  return {
    browser: browserName.slice(0, 100),
    browser_version: majorMinor(r?.browser.version),
    os: (os?.name ?? '').slice(0, 100),
    os_version: osVersion.slice(0, 50),
    device: DEVICE[r?.platform.type ?? ''] ?? '',
    ...classifyBot(ua, browserName),
  };
}

export function parseUserAgent(ua: string): ClientFields {
  const key = ua.slice(0, 1000);
  const hit = cache.get(key);
  if (hit) {
    cache.delete(key);
    cache.set(key, hit);
    return hit;
  }
  const fields = parse(key);
  if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value!);
  cache.set(key, fields);
  return fields;
}
