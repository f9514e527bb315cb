/**
 * What each alert trigger watches and which way it fires. One entry per trigger type; the worker and
 * the API read only this table.
 */
export const TRIGGER_TYPES = ['goal', 'visitors_spike', 'traffic_drop', 'revenue'] as const;
export type TriggerType = (typeof TRIGGER_TYPES)[number];

export const THRESHOLD_MODES = ['absolute', 'percent_change'] as const;
export type ThresholdMode = (typeof THRESHOLD_MODES)[number];

export interface TriggerDef {
  /** The figure watched over the alert's window. */
  figure: 'goals' | 'visitors' | 'revenue_cents';
  /** `up`: fires at or above the threshold (or a rise of at least threshold %); `down`: at or below (a fall of at least threshold %). */
  direction: 'up' | 'down';
  needsGoal: boolean;
}

export const TRIGGERS = {
  goal: { figure: 'goals', direction: 'up', needsGoal: true },
  visitors_spike: { figure: 'visitors', direction: 'up', needsGoal: false },
  traffic_drop: { figure: 'visitors', direction: 'down', needsGoal: false },
  revenue: { figure: 'revenue_cents', direction: 'up', needsGoal: false },
} as const satisfies Record<TriggerType, TriggerDef>;

export interface Measurement {
  /** The figure over [now - window, now). */
  current: number;
  /** The figure over the window before that; only measured for percent_change. */
  previous?: number;
}

/**
 * Whether the alert's condition holds. percent_change compares with the previous window of the same
 * length; with nothing in the previous window there is no percentage, so it never holds (a site
 * going from 0 to 1 visitor at night is not a spike).
 */
export function conditionHolds(alert: AlertCondition, m: Measurement): boolean {
  const figure = comparedFigure(alert, m);
  if (figure === null) return false;
  const atMost = alert.threshold_mode === 'absolute' && TRIGGERS[alert.trigger_type].direction === 'down';
  return atMost ? figure <= alert.threshold : figure >= alert.threshold;
}

type AlertCondition = { trigger_type: TriggerType; threshold_mode: ThresholdMode; threshold: number };

/**
 * What is compared with the threshold (and recorded as a firing's value): the figure, or for
 * percent_change the rise in percent (a drop alert: the fall); null without a previous figure.
 */
export function comparedFigure(alert: AlertCondition, m: Measurement): number | null {
  if (alert.threshold_mode === 'absolute') return m.current;
  if (!m.previous) return null;
  const change = ((m.current - m.previous) / m.previous) * 100;
  return TRIGGERS[alert.trigger_type].direction === 'up' ? change : -change;
}

/** Edge-triggered: fire on the transition into the condition, re-arm when it stops holding. */
export function nextEdge(wasFiring: boolean, holds: boolean): { fire: boolean; firing: boolean } {
  return { fire: holds && !wasFiring, firing: holds };
}
