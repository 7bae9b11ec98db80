/**
 * Id globs of JWT claims (`per`, `dpv`) and pub/sub patterns: `*` matches any run of
 * characters (none included, `/` included); every other character matches itself. There is
 * no escape: an id that holds `*` is matched by a `*` in the pattern like any character. Pure.
 */

/** True when `id` matches `pattern`. Linear backtracking (one saved star), no regular expression. */
export function globMatches(pattern: string, id: string): boolean {
  if (pattern === '*') return true;
  if (!pattern.includes('*')) return pattern === id;
  let p = 0;
  let i = 0;
  let star = -1;
  let mark = 0;
  while (i < id.length) {
    if (p < pattern.length && pattern[p] !== '*' && pattern[p] === id[i]) {
      p++;
      i++;
    } else if (p < pattern.length && pattern[p] === '*') {
      star = p++;
      mark = i;
    } else if (star >= 0) {
      p = star + 1;
      i = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.length && pattern[p] === '*') p++;
  return p === pattern.length;
}

/** True when `id` matches at least one of `patterns`. */
export function anyGlobMatches(patterns: Iterable<string>, id: string): boolean {
  for (const pattern of patterns) if (globMatches(pattern, id)) return true;
  return false;
}
