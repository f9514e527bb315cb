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
 * A matcher that runs in O(path x glob) whatever the glob: the set of glob positions reachable after
 * each character (an NFA simulated breadth first, as RE2 does). `ignoreCase` compares lower-cased.
 */
export function compileGlob(glob: string, opts: { ignoreCase?: boolean } = {}): (path: string) => boolean {
  const fold = (s: string) => (opts.ignoreCase ? s.toLowerCase() : s);
  const ts = tokens(fold(glob));
  const wild = (t: Token | undefined) => t !== undefined && t.kind !== 'char';
  if (!ts.some((t) => t.kind !== 'char')) {
    const literal = fold(glob);
    return (path) => fold(path) === literal;
  }
  const n = ts.length;
  // A wildcard may match nothing: reaching position i also reaches i + 1 while i is one.
  const close = (set: Uint8Array<ArrayBuffer>) => {
    for (let i = 0; i < n; i++) if (set[i] && wild(ts[i])) set[i + 1] = 1;
    return set;
  };
  return (raw) => {
    const path = fold(raw);
    let now = new Uint8Array(n + 1);
    let next = new Uint8Array(n + 1);
    now[0] = 1;
    close(now);
    for (let p = 0; p < path.length; p++) {
      const c = path[p];
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
      [now, next] = [close(next), now];
    }
    return now[n] === 1;
  };
}

export function globMatch(glob: string, path: string): boolean {
  return compileGlob(glob)(path);
}
