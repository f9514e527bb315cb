import { stepConditions } from '../../query/funnel-report';

test('step conditions bind every value and never inline one', () => {
  const params: Record<string, unknown> = {};
  const sql = stepConditions(
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
    params,
  );
  expect(sql).toEqual([
    "(is_payment = 0 AND name = 'pageview' AND match(pathname, {v0:String}))",
    "((is_payment = 0 AND name NOT IN ('pageview', 'exit_link', 'file_download') AND startsWith(name, {v1:String})) OR " +
      "(is_payment = 0 AND name = 'pageview' AND match(pathname, {v2:String})) OR (is_payment = 0 AND name = {v3:String}))",
    'is_payment = 1',
  ]);
  expect(params).toEqual({ v0: "^/blog/[^/]*'; DROP TABLE x --$", v1: 'Sign', v2: '^/welcome/.*$', v3: 'signup_completed' });
});
