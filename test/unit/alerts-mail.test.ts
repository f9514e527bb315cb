import { alertMessage } from '../../model/alerts-mail';

const base = { name: 'Signups', subject: 'Signups are in', body: null, goal_name: null, threshold_mode: 'absolute', window_minutes: 30 } as const;
const fired = { fired_at: '2026-06-01T11:00:00.000Z', value: 3, threshold: 2 };

describe('alertMessage', () => {
  test('a null body is replaced by the summary; the subject is the alert\'s', () => {
    const m = alertMessage({ ...base, trigger_type: 'goal', goal_name: 'Signup' }, 'shop.example.com', fired);
    expect(m.subject).toBe('Signups are in');
    expect(m.text).toBe([
      'Alert "Signups" fired for shop.example.com.', '',
      'Site: shop.example.com', 'Alert: Signups', 'Trigger: goal',
      'Condition: completions of goal "Signup" over the last 30 minutes at or above 2 (absolute)',
      'Measured: 3', 'Fired at: 2026-06-01T11:00:00.000Z (UTC)', '',
    ].join('\n'));
  });

  test('a body comes first, trailing blank lines trimmed, then the summary after a rule', () => {
    const m = alertMessage({ ...base, trigger_type: 'revenue', body: 'Sales are up.\n\n' }, 'shop.example.com', { ...fired, value: 1500, threshold: 1000 });
    expect(m.text).toMatch(/^Sales are up\.\n\n---\nAlert "Signups" fired for shop\.example\.com\.\n/);
    expect(m.text).toContain('\nCondition: revenue in cents over the last 30 minutes at or above 1000 (absolute)\nMeasured: 1500\n');
  });

  test('a drop reads "at or below"; percent_change names the rise or fall against the window before', () => {
    expect(alertMessage({ ...base, trigger_type: 'traffic_drop' }, 'a.example', { ...fired, value: 1, threshold: 2 }).text)
      .toContain('\nCondition: visitors over the last 30 minutes at or below 2 (absolute)\nMeasured: 1\n');
    expect(alertMessage({ ...base, trigger_type: 'visitors_spike', threshold_mode: 'percent_change' }, 'a.example', { ...fired, value: 150, threshold: 100 }).text)
      .toContain('\nCondition: a rise of at least 100 % in visitors over the last 30 minutes, against the 30 minutes before (percent_change)\nMeasured: a rise of 150 %\n');
  });
});
