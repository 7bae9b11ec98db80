/** Id globs (compat 12.8): `*` is any run of characters, everything else literal. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { compileGlob, globMatches } from '../../internal/domain/id-glob.js';

/** An independent reference: the pattern as an anchored regular expression, every other character escaped. */
function reference(pattern: string, id: string): boolean {
  const source = pattern
    .split('*')
    .map((piece) => piece.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&'))
    .join('[\\s\\S]*');
  return new RegExp(`^${source}$`, 'u').test(id);
}

describe('id globs', () => {
  it('matches the cases of the Hivekit client suite and scratch script', () => {
    assert.equal(globMatches('*', 'some-id'), true);
    assert.equal(globMatches('*', 'another-id'), true);
    assert.equal(globMatches('*', ''), true);
    assert.equal(globMatches('some-id', 'some-id'), true);
    assert.equal(globMatches('some-id', 'another-id'), false);
    assert.equal(globMatches('/object/*', '/object/123'), true);
    assert.equal(globMatches('car/*', 'car/-Nx1'), true);
    assert.equal(globMatches('car/*', 'truck/1'), false);
    assert.equal(globMatches('car/*', 'car'), false);
  });

  it('lets * run over slashes and match empty runs', () => {
    assert.equal(globMatches('a*', 'a/b/c'), true);
    assert.equal(globMatches('a*b', 'ab'), true);
    assert.equal(globMatches('a*b*c', 'a/x/b/y/c'), true);
    assert.equal(globMatches('a*b*c', 'acb'), false);
    assert.equal(globMatches('*-id', 'some-id'), true);
    assert.equal(globMatches('**', 'x'), true);
    assert.equal(globMatches('a**b', 'ab'), true);
  });

  it('does not let the first and last pieces overlap', () => {
    assert.equal(globMatches('ab*ba', 'aba'), false);
    assert.equal(globMatches('ab*ba', 'abba'), true);
    assert.equal(globMatches('a*a*a', 'aa'), false);
    assert.equal(globMatches('a*a*a', 'aaa'), true);
  });

  it('treats every other character literally (no regular-expression injection)', () => {
    assert.equal(globMatches('a.c', 'abc'), false);
    assert.equal(globMatches('a.c', 'a.c'), true);
    assert.equal(globMatches('a?c', 'abc'), false);
    assert.equal(globMatches('[ab]', 'a'), false);
    assert.equal(globMatches('[ab]', '[ab]'), true);
    assert.equal(globMatches('(a|b)', 'a'), false);
    assert.equal(globMatches('a\\*', 'a\\xyz'), true);
    assert.equal(globMatches('^$', '^$'), true);
    // A pattern that would backtrack catastrophically as a naive regular expression.
    const started = Date.now();
    assert.equal(globMatches(`${'*a'.repeat(40)}*b`, 'a'.repeat(5000)), false);
    assert.ok(Date.now() - started < 1000);
  });

  it('compiles to a prefix and a literal flag', () => {
    assert.deepEqual({ ...compileGlob('car/*'), matches: undefined }, { pattern: 'car/*', prefix: 'car/', literal: false, matches: undefined });
    assert.equal(compileGlob('car/1').literal, true);
    assert.equal(compileGlob('car/1').prefix, 'car/1');
    assert.equal(compileGlob('*x').prefix, '');
  });

  it('agrees with an anchored regular expression on arbitrary patterns and ids', () => {
    const alphabet = fc.constantFrom('a', 'b', '/', '*', '.', '\\', '€', '😀');
    const text = fc.array(alphabet, { maxLength: 10 }).map((chars) => chars.join(''));
    fc.assert(
      fc.property(text, text, (pattern, id) => {
        // Ids are literal: a * in an id is an ordinary character.
        assert.equal(globMatches(pattern, id), reference(pattern, id));
        // An id built from the pattern by filling each * always matches.
        assert.equal(globMatches(pattern, pattern.replaceAll('*', 'zz/')), true);
      }),
      { numRuns: 2000 },
    );
  });
});
