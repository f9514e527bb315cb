/**
 * Path globs, one meaning everywhere (excluded paths at ingest, `path_pattern` filters, page goals):
 * `*` matches within one path segment, `**` matches across segments, everything else is literal.
 * The result is an anchored RE2-compatible regular expression, usable in JS and ClickHouse `match()`.
 */
export function globToRegex(glob: string): string {
  let out = '^';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (c === '*' && glob[i + 1] === '*') {
      out += '.*';
      i++;
    } else if (c === '*') {
      out += '[^/]*';
    } else {
      out += /[\\^$.|?+()[\]{}]/.test(c) ? '\\' + c : c;
    }
  }
  return out + '$';
}

export function globMatch(glob: string, path: string): boolean {
  return new RegExp(globToRegex(glob)).test(path);
}
