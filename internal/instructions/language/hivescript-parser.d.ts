/**
 * Types of the parser Peggy generates from hivescript.peggy at build time
 * (scripts/build-parser.mjs writes hivescript-parser.js next to the compiled modules).
 */
import type { ProgramNode } from './ast.js';

/** Where a syntax error is, as Peggy reports it (1-based line and column, 0-based offset). */
export interface ParserLocation {
  start: { line: number; column: number; offset: number };
  end: { line: number; column: number; offset: number };
}

/** One thing the parser would have accepted where it stopped. */
export type ParserExpectation =
  | { type: 'literal'; text: string; ignoreCase: boolean }
  | { type: 'class'; parts: (string | [string, string])[]; inverted: boolean; ignoreCase: boolean }
  | { type: 'any' }
  | { type: 'end' }
  | { type: 'other'; description: string };

/**
 * A refusal of the grammar. `expected` and `found` are null when a grammar action refused
 * with its own message (an unclosed string, a bad escape).
 */
export class SyntaxError extends Error {
  expected: ParserExpectation[] | null;
  found: string | null;
  location: ParserLocation;
}

export function parse(input: string): ProgramNode;
