/**
 * HiveScript's entry point: source text → syntax tree (the generated Peggy parser) → checked
 * Program (check.ts). Every refusal is a LocusError `invalid_instruction` whose message begins
 * `Error: Incorrect Syntax.` and names line and column (an InstructionSyntaxError).
 */
import type { Position, Program, ProgramNode } from './ast.js';
import { check } from './check.js';
import { parse, SyntaxError as ParserSyntaxError } from './hivescript-parser.js';
import { InstructionSyntaxError, fromParserError } from './syntax-error.js';

/**
 * Deepest nesting of parentheses taken to the parser. The language itself nests at most two
 * levels (`object(a < object(b = 1).get("c"))`); the bound keeps the parser's recursion far
 * from the stack limit whatever the source.
 */
const MAX_NESTING = 32;

/**
 * Where parentheses first nest deeper than MAX_NESTING, or null. Skips double-quoted strings,
 * comments and `\#`, like the grammar; an unclosed string simply ends the scan, leaving that
 * refusal to the parser.
 */
function tooDeep(source: string): Position | null {
  let depth = 0;
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === '\n') {
      line++;
      lineStart = i + 1;
    } else if (c === '\\' && source[i + 1] !== '\n') {
      i++;
    } else if (c === '#') {
      while (i + 1 < source.length && source[i + 1] !== '\n') i++;
    } else if (c === '"') {
      for (i++; i < source.length && source[i] !== '"'; i++) {
        if (source[i] === '\n') {
          i--;
          break;
        }
        if (source[i] === '\\' && source[i + 1] !== '\n') i++;
      }
    } else if (c === '(') {
      depth++;
      if (depth > MAX_NESTING) return { line, column: i - lineStart + 1, offset: i };
    } else if (c === ')') {
      depth = Math.max(0, depth - 1);
    }
  }
  return null;
}

/** The syntax tree of a source, or an InstructionSyntaxError. */
export function parseInstruction(source: string): ProgramNode {
  const deep = tooDeep(source);
  if (deep !== null) throw new InstructionSyntaxError(deep, `calls nest more than ${MAX_NESTING} levels deep`);
  try {
    return parse(source);
  } catch (error) {
    if (error instanceof ParserSyntaxError) throw fromParserError(error);
    throw error;
  }
}

/** Parses and checks a HiveScript source (docs/instructions.md); throws InstructionSyntaxError. */
export function compileInstruction(source: string): Program {
  return check(parseInstruction(source));
}
