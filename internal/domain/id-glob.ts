/**
 * Id globs (hivekit-compat.md 12.8): a pattern matches an id when its `*`s can stand for
 * runs of characters (empty runs included, `/` included) and every other character equals
 * the id's character in that place. No other character is special: `?`, `[`, `.`, `\` and
 * the rest are literal, so a pattern can never inject a regular expression. The id matched
 * against is always literal. Used by pub/sub subscriptions, presence claims (JWT `dpv`) and
 * `per` rights. Pure: no I/O.
 */

/** A pattern prepared for matching many ids. */
export interface CompiledGlob {
  readonly pattern: string;
  /** The literal text before the first `*` (the whole pattern when it has none). */
  readonly prefix: string;
  /** True when the pattern has no `*`: it matches exactly the id equal to it. */
  readonly literal: boolean;
  matches(id: string): boolean;
}

/** Splits at `*` and matches the pieces greedily left to right (linear in the id, no backtracking blow-up). */
export function compileGlob(pattern: string): CompiledGlob {
  const pieces = pattern.split('*');
  const [first = ''] = pieces;
  if (pieces.length === 1) {
    return { pattern, prefix: pattern, literal: true, matches: (id) => id === pattern };
  }
  const last = pieces[pieces.length - 1] ?? '';
  const middle = pieces.slice(1, -1).filter((piece) => piece !== '');
  const minLength = first.length + last.length + middle.reduce((sum, piece) => sum + piece.length, 0);
  const anything = middle.length === 0 && first === '' && last === '';
  return {
    pattern,
    prefix: first,
    literal: false,
    matches(id: string): boolean {
      if (anything) return true;
      if (id.length < minLength || !id.startsWith(first) || !id.endsWith(last)) return false;
      // The middle pieces, each at its leftmost place after the one before, within the
      // part of the id that the first and last pieces leave.
      let at = first.length;
      const end = id.length - last.length;
      for (const piece of middle) {
        const found = id.indexOf(piece, at);
        if (found === -1 || found + piece.length > end) return false;
        at = found + piece.length;
      }
      return true;
    },
  };
}

/** One-off match; compile once with compileGlob when matching many ids. */
export function globMatches(pattern: string, id: string): boolean {
  return compileGlob(pattern).matches(id);
}

/** True when `id` matches at least one of `patterns`. */
export function anyGlobMatches(patterns: Iterable<string>, id: string): boolean {
  for (const pattern of patterns) if (globMatches(pattern, id)) return true;
  return false;
}
