import { stepConditions } from '../../query/funnel-report';
import { select, table } from '../../query/sql/ast';
import { compile } from '../../query/sql/compiler';

test('step conditions bind every value and never inline one', () => {
  const conditions = stepConditions(
    [
      { kind: 'view', match: 'glob', value: "/blog/*'; DROP TABLE x --" },
      { kind: 'goal', match: 'starts_with', value: 'Sign' },
      { kind: 'payment' },
    ],
    [
      { name: 'Signup page', kind: 'page', event_name: '', path_pattern: '/welcome/**' },
      { name: 'Signup done', kind: 'event', event_name: 'signup_completed', path_pattern: '' },
      { name: 'Docs', kind: 'page', event_name: '', path_pattern: '/docs/**' },
    ],
  );
  const { sql, params } = compile(select({ columns: conditions, from: table('events') }), { database: 'tally' });
  const named = (value: unknown) => Object.entries(params).find(([, v]) => v === value)?.[0];
  const [glob, prefix, page, event, pageview] = ["^/blog/[^/]*'; DROP TABLE x --$", 'Sign', '^/welcome/.*$', 'signup_completed', 'pageview'].map(named);
  expect([glob, prefix, page, event, pageview].every(Boolean)).toBe(true);
  const [exitLink, download] = ['exit_link', 'file_download'].map(named);
  // The view step; the goal step as sent goals OR the two defined goals its name matches (not Docs); payments.
  expect(sql).toBe(
    `SELECT ((is_payment = 0) AND (name = {${pageview}:String}) AND match(pathname, {${glob}:String})), ` +
    `(((is_payment = 0) AND name NOT IN [{${pageview}:String}, {${exitLink}:String}, {${download}:String}] AND startsWith(name, {${prefix}:String})) OR ` +
    `((is_payment = 0) AND (name = {${pageview}:String}) AND match(pathname, {${page}:String})) OR ((is_payment = 0) AND (name = {${event}:String}))), ` +
    `(is_payment = 1)\nFROM tally.events`,
  );
  expect(sql).not.toMatch(/DROP|welcome|signup_completed|Sign'|docs/);
  expect(Object.values(params)).not.toContain('^/docs/.*$');
});
