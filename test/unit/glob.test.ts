import fc from 'fast-check';
import { compileGlob, globMatch, globToRegex, withLeadingSlash } from '../../core/glob';

/**
 * Globs: `*` within a segment, `**` across. The JS matcher (ingest exclusions, funnel goal names)
 * must mean what the RE2 expression ClickHouse runs means, and must not backtrack.
 */
test.each([
  ['/admin/**', '/admin/users/1', true],
  ['/admin/**', '/admin', false],
  ['/admin/**', '/admin/', true],
  ['/blog/*', '/blog/post', true],
  ['/blog/*', '/blog/a/b', false],
  ['/blog/*/edit', '/blog/x/edit', true],
  ['/blog/*/edit', '/blog/edit', false],
  ['/*.pdf', '/file.pdf', true],
  ['/*.pdf', '/dir/file.pdf', false],
  ['/**.pdf', '/dir/file.pdf', true],
  ['/a.b', '/aXb', false],
  ['/(x)+[y]', '/(x)+[y]', true],
  ['**', '', true],
  ['/exact', '/exact', true],
  ['/exact', '/exact/', false],
])('%s on %s is %s', (glob, path, expected) => {
  expect(globMatch(glob, path)).toBe(expected);
  expect(new RegExp(globToRegex(glob)).test(path)).toBe(expected);
});

test('ignoreCase compares both sides lower-cased', () => {
  expect(compileGlob('/Admin/**', { ignoreCase: true })('/ADMIN/x')).toBe(true);
  expect(compileGlob('/admin/*', { ignoreCase: true })('/Admin/X')).toBe(true);
  expect(compileGlob('/admin/*')('/Admin/X')).toBe(false);
});

test('the matcher agrees with the regular expression on random globs and paths', () => {
  const alphabet = fc.constantFrom('a', 'b', '/', '.', '*');
  const glob = fc.array(alphabet, { maxLength: 10 }).map((cs) => cs.join(''));
  const path = fc.array(fc.constantFrom('a', 'b', '/', '.'), { maxLength: 12 }).map((cs) => cs.join(''));
  fc.assert(fc.property(glob, path, (g, p) => globMatch(g, p) === new RegExp(globToRegex(g)).test(p)), { numRuns: 5000 });
});

test('a glob built to make a backtracking engine explode is answered at once', () => {
  // As a JS RegExp this pair takes longer than the universe's age; the matcher steps through the path once.
  const hostile = '/' + '*a'.repeat(12) + '*b';
  const path = '/' + 'a'.repeat(10_000);
  expect(globMatch(hostile, path)).toBe(false);
  expect(globMatch(hostile, path + 'b')).toBe(true);
});

test('a path or glob gets its leading slash, except a glob that starts with *: it already reaches the leading / and a / in front would narrow it', () => {
  expect(['pricing', 'docs/**', '/x', '**/pricing', '*/pricing', '*'].map(withLeadingSlash)).toEqual(['/pricing', '/docs/**', '/x', '**/pricing', '*/pricing', '*']);
  // What the rule keeps: **/pricing matches the root page too, which /**/pricing does not.
  expect(['/pricing', '/a/pricing'].map((p) => globMatch(withLeadingSlash('**/pricing'), p))).toEqual([true, true]);
  expect(globMatch('/**/pricing', '/pricing')).toBe(false);
});
