import type { SourceCategory } from './sources';

/**
 * GA4's default channel group, rule by rule in GA4's order, plus `AI Assistants` (placed after the
 * paid rules, before the organic ones, so an assistant on a search engine's domain such as
 * gemini.google.com is never counted as Organic Search). Inputs are GA4's dimensions: session
 * source, medium and campaign, lower-cased, and the source's category from the source tables.
 */
export interface ChannelInput {
  source: string;
  medium: string;
  campaign: string;
  category: SourceCategory | null;
}

/** The channel of visits referred by an AI assistant (source category `ai`). */
export const AI_CHANNEL = 'AI Assistants';

const PAID = /^(.*cp.*|ppc|retargeting|paid.*)$/;
const SHOP_CAMPAIGN = /^(.*(([^a-df-z]|^)shop|shopping).*)$/;
const DISPLAY = new Set(['display', 'banner', 'expandable', 'interstitial', 'cpm']);
const SOCIAL_MEDIUM = new Set(['social', 'social-network', 'social-media', 'sm', 'social network', 'social media']);
const EMAIL = new Set(['email', 'e-mail', 'e_mail', 'e mail']);

type Rule = readonly [channel: string, test: (i: ChannelInput) => boolean];

const paid = (i: ChannelInput) => PAID.test(i.medium);
const shopping = (i: ChannelInput) => i.category === 'shopping' || SHOP_CAMPAIGN.test(i.campaign);

export const CHANNEL_RULES: readonly Rule[] = [
  ['Direct', (i) => i.source === '(direct)' && (i.medium === '(none)' || i.medium === '(not set)')],
  ['Cross-network', (i) => i.campaign.includes('cross-network')],
  ['Paid Shopping', (i) => shopping(i) && paid(i)],
  ['Paid Search', (i) => i.category === 'search' && paid(i)],
  ['Paid Social', (i) => i.category === 'social' && paid(i)],
  ['Paid Video', (i) => i.category === 'video' && paid(i)],
  ['Display', (i) => DISPLAY.has(i.medium)],
  ['Paid Other', paid],
  [AI_CHANNEL, (i) => i.category === 'ai'],
  ['Organic Shopping', shopping],
  ['Organic Social', (i) => i.category === 'social' || SOCIAL_MEDIUM.has(i.medium)],
  ['Organic Video', (i) => i.category === 'video' || i.medium.includes('video')],
  ['Organic Search', (i) => i.category === 'search' || i.medium === 'organic'],
  ['Referral', (i) => i.medium === 'referral' || i.medium === 'app' || i.medium === 'link'],
  ['Email', (i) => EMAIL.has(i.source) || EMAIL.has(i.medium) || i.category === 'email'],
  ['Affiliates', (i) => i.medium === 'affiliate'],
  ['Audio', (i) => i.medium === 'audio'],
  ['SMS', (i) => i.source === 'sms' || i.medium === 'sms'],
  ['Mobile Push Notifications', (i) => i.medium.endsWith('push') || i.medium.includes('mobile') || i.medium.includes('notification') || i.source === 'firebase'],
];

export const UNASSIGNED = 'Unassigned';

/** Every channel a session can be given, in rule order. */
export const CHANNELS: readonly string[] = [...CHANNEL_RULES.map(([channel]) => channel), UNASSIGNED];

export function channelOf(input: ChannelInput): string {
  for (const [channel, test] of CHANNEL_RULES) if (test(input)) return channel;
  return UNASSIGNED;
}
