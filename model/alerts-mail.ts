import { TRIGGERS } from './alerts-rules';
import type { AlertRow } from './alerts';

/** What one firing's mail says: the subject and the plain-text body (workers/jobs/alert-delivery.ts sends it). */
export interface AlertMessage {
  subject: string;
  text: string;
}

/** A firing as the delivery job carries it: the values recorded when it fired. */
export interface FiredValues {
  /** ISO 8601, UTC, minute-aligned. */
  fired_at: string;
  value: number;
  threshold: number;
}

type Described = Pick<AlertRow, 'name' | 'subject' | 'body' | 'trigger_type' | 'goal_name' | 'threshold_mode' | 'window_minutes'>;

const FIGURES = {
  goals: 'completions',
  visitors: 'visitors',
  revenue_cents: 'revenue in cents',
} as const;

/**
 * The mail for a firing: the alert's own subject, and its body (when set) followed by a generated
 * summary of what fired, so a mail read without Tally open still says which site, which alert and
 * why. Nothing beyond what a key with `alerts:read` and `analytics:read` on the site sees.
 */
export function alertMessage(alert: Described, domain: string, fired: FiredValues): AlertMessage {
  const summary = firingSummary(alert, domain, fired);
  return { subject: alert.subject, text: alert.body ? `${alert.body.trimEnd()}\n\n---\n${summary}` : summary };
}

function firingSummary(alert: Described, domain: string, fired: FiredValues): string {
  const def = TRIGGERS[alert.trigger_type];
  const figure = def.figure === 'goals' ? `completions of goal "${alert.goal_name ?? ''}"` : FIGURES[def.figure];
  const over = `over the last ${alert.window_minutes} minutes`;
  const percent = alert.threshold_mode === 'percent_change';
  const way = def.direction === 'up' ? 'rise' : 'fall';
  const condition = percent
    ? `a ${way} of at least ${fired.threshold} % in ${figure} ${over}, against the ${alert.window_minutes} minutes before (percent_change)`
    : `${figure} ${over} at ${def.direction === 'up' ? 'or above' : 'or below'} ${fired.threshold} (absolute)`;
  return [
    `Alert "${alert.name}" fired for ${domain}.`,
    '',
    `Site: ${domain}`,
    `Alert: ${alert.name}`,
    `Trigger: ${alert.trigger_type}`,
    `Condition: ${condition}`,
    `Measured: ${percent ? `a ${way} of ${fired.value} %` : fired.value}`,
    `Fired at: ${fired.fired_at} (UTC)`,
    '',
  ].join('\n');
}
