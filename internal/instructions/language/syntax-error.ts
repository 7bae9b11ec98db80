/**
 * The one refusal of HiveScript: `Error: Incorrect Syntax. Line <l>, column <c>: <detail>.`
 * Hivekit's clients test only the prefix (compat 4.9); the rest says where and what, for the
 * grammar's refusals and the checker's alike.
 */
import { LocusError } from '../../errors.js';
import type { Position } from './ast.js';
import type { ParserExpectation, SyntaxError as ParserSyntaxError } from './hivescript-parser.js';

/** A LocusError `invalid_instruction` that also carries where the source was refused. */
export class InstructionSyntaxError extends LocusError {
  /** 1-based line of the refused place. */
  readonly line: number;
  /** 1-based column (in UTF-16 code units) of the refused place. */
  readonly column: number;
  /** What is wrong there, without the prefix and the position. */
  readonly detail: string;

  constructor(at: Pick<Position, 'line' | 'column'>, detail: string) {
    super('invalid_instruction', `Error: Incorrect Syntax. Line ${at.line}, column ${at.column}: ${detail}.`);
    this.line = at.line;
    this.column = at.column;
    this.detail = detail;
  }
}

function describeExpectation(expectation: ParserExpectation): string {
  switch (expectation.type) {
    case 'literal':
      return JSON.stringify(expectation.text.toLowerCase());
    case 'other':
      return expectation.description;
    case 'end':
      return 'the end of the instruction';
    case 'any':
      return 'more text';
    case 'class':
      // Every character class of the grammar sits inside a rule with a description; this is
      // only reached if a new one does not.
      return 'another character';
  }
}

/** What the parser met where it stopped, for "but found …". */
function describeFound(found: string | null): string {
  if (found === null) return 'the end of the instruction';
  if (found === '\n' || found === '\r') return 'the end of the line';
  return JSON.stringify(found);
}

/** "a, b or c", in the order the parser tried them, without repeats. */
function listOf(items: string[]): string {
  const unique = [...new Set(items)];
  if (unique.length <= 1) return unique.join('');
  return `${unique.slice(0, -1).join(', ')} or ${unique[unique.length - 1]}`;
}

/** The refusal for an error of the generated parser. */
export function fromParserError(error: ParserSyntaxError): InstructionSyntaxError {
  const at = error.location.start;
  if (error.expected === null) {
    // A grammar action's own message (error() in hivescript.peggy).
    return new InstructionSyntaxError(at, error.message);
  }
  const expected = listOf(error.expected.map(describeExpectation));
  return new InstructionSyntaxError(at, `expected ${expected} but found ${describeFound(error.found)}`);
}
