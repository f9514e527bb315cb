/**
 * Path globs, one meaning everywhere (excluded paths at ingest, `path_pattern` filters, page goals):
 * `*` matches within one path segment, `**` matches across segments, everything else is literal.
 *
 * Two forms of one meaning: globToRegex gives an anchored RE2 expression for ClickHouse's `match()`
 * (RE2 runs in linear time), and compileGlob a matcher for JavaScript. TRAP: not a JS RegExp of the
 * same text: V8's backtracking makes `/*a*a*a*a*a*a*a*a*b` take seconds on a path of a hundred
 * characters, and a glob is anyone's with settings:write while the path is anyone's on the internet.
 */
type Token = { kind: 'char'; char: string } | { kind: 'star' } | { kind: 'globstar' };

function tokens(glob: string): Token[] {
  const out: Token[] = [];
  for (let i = 0; i < glob.length; i++) {
    if (glob[i] !== '*') out.push({ kind: 'char', char: glob[i] });
    else if (glob[i + 1] === '*') {
      i++;
      if (out[out.length - 1]?.kind !== 'globstar') out.push({ kind: 'globstar' });
    } else if (out[out.length - 1]?.kind !== 'star' && out[out.length - 1]?.kind !== 'globstar') out.push({ kind: 'star' });
  }
  return out;
}

export function globToRegex(glob: string): string {
  let out = '^';
  for (const t of tokens(glob)) {
    if (t.kind === 'globstar') out += '.*';
    else if (t.kind === 'star') out += '[^/]*';
    else out += /[\\^$.|?+()[\]{}*]/.test(t.char) ? '\\' + t.char : t.char;
  }
  return out + '$';
}

/**
 * An NFA over `ts` simulated breadth first, as RE2 does: the set of glob positions reachable after
 * each character, so O(text x glob) whatever the glob. Its two position sets are made once.
 */
function positions(ts: Token[]): (text: string) => boolean {
  const n = ts.length;
  let now = new Uint8Array(n + 1);
  let next = new Uint8Array(n + 1);
  // A wildcard may match nothing: reaching position i also reaches i + 1 while i is one.
  const close = (set: Uint8Array) => {
    for (let i = 0; i < n; i++) if (set[i] && ts[i].kind !== 'char') set[i + 1] = 1;
  };
  return (text) => {
    now.fill(0);
    now[0] = 1;
    close(now);
    for (let p = 0; p < text.length; p++) {
      const c = text[p];
      next.fill(0);
      let any = false;
      for (let i = 0; i < n; i++) {
        if (!now[i]) continue;
        const t = ts[i];
        if (t.kind === 'globstar' || (t.kind === 'star' && c !== '/')) next[i] = 1;
        else if (t.kind === 'char' && t.char === c) next[i + 1] = 1;
        else continue;
        any = true;
      }
      if (!any) return false;
      close(next);
      [now, next] = [next, now];
    }
    return now[n] === 1;
  };
}

/**
 * The glob as a JavaScript matcher, linear in the path. The literal text before the first wildcard
 * and after the last must start and end the path; what lies between is one `**` (anything), one `*`
 * (no `/`), or else the NFA. So the usual globs (`/admin/**`, `/blog/*`, `/**.pdf`) cost a prefix and
 * a suffix compare: ingest runs every excluded-path glob on every event. `ignoreCase` compares
 * lower-cased.
 */
export function compileGlob(glob: string, opts: { ignoreCase?: boolean } = {}): (path: string) => boolean {
  const fold = opts.ignoreCase ? (s: string) => s.toLowerCase() : (s: string) => s;
  const ts = tokens(fold(glob));
  const first = ts.findIndex((t) => t.kind !== 'char');
  if (first < 0) {
    const literal = fold(glob);
    return (path) => fold(path) === literal;
  }
  const last = ts.findLastIndex((t) => t.kind !== 'char');
  const text = (from: number, to: number) => ts.slice(from, to).map((t) => (t.kind === 'char' ? t.char : '')).join('');
  const head = text(0, first);
  const tail = text(last + 1, ts.length);
  const middle = ts.slice(first, last + 1);
  const between = middle.length === 1 ? middle[0].kind : positions(middle);
  return (raw) => {
    const path = fold(raw);
    if (path.length < head.length + tail.length || !path.startsWith(head) || !path.endsWith(tail)) return false;
    if (between === 'globstar') return true;
    const rest = path.slice(head.length, path.length - tail.length);
    return typeof between === 'function' ? between(rest) : !rest.includes('/');
  };
}

export function globMatch(glob: string, path: string): boolean {
  return compileGlob(glob)(path);
}

// A path (or path glob) given without its leading `/` is given one: settings, goals and funnel steps
// alike. A glob that starts with `*` is kept as given: it already reaches the leading `/` (`**/pricing`
// matches `/pricing` and `/a/pricing`), and a `/` in front would change what it means (`/**/pricing`
// misses `/pricing`); `path_pattern` filters follow the same rule. (Line comments: those globs would
// end a block comment.)
export const withLeadingSlash = (p: string): string => (p.startsWith('/') || p.startsWith('*') ? p : `/${p}`);
