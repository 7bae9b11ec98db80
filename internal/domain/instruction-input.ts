/**
 * Instruction create and update bodies (hivekit-rest.md 6, hivekit-compat.md 4.9): `label`,
 * `instruction` (the HiveScript source), `data`. Pure: the source's syntax is the language's
 * to check (instructions/language), its length and the realm's count the service's.
 */
import { invalid, LocusError } from '../errors.js';
import { parseData, parseDataPatch } from './data.js';
import { describe, quote, requireObject } from './ids.js';
import { parseLabel } from './object-input.js';
import type { Data, DataPatch } from './types.js';

const ALLOWED = new Set(['id', 'label', 'instruction', 'data']);

/** What the client asserts of every refused source, missing ones included (compat 4.9). */
export const SYNTAX_ERROR_PREFIX = 'Error: Incorrect Syntax.';

export interface InstructionCreate {
  label: string | null;
  source: string;
  data: Data;
}

export interface InstructionChanges {
  label?: string | null;
  source?: string;
  data?: DataPatch;
}

/** The body as a JSON object, with unknown keys and an `id` other than the path's refused. */
function readBody(id: string, body: unknown): Record<string, unknown> {
  const object = requireObject(body, '', 'invalid_request');
  for (const key of Object.keys(object)) {
    if (!ALLOWED.has(key)) throw invalid(`unknown key ${quote(key)} in the request body; allowed: id, label, instruction, data`);
  }
  const given = object.id;
  if (given !== undefined && given !== id) {
    throw invalid(`id in the request body (${describe(given)}) differs from the instruction id in the path (${quote(id)}); omit it or make them equal`, 'invalid_id');
  }
  return object;
}

/** The source as given, or the syntax error of a missing or non-string one. */
function parseSource(value: unknown, maxChars: number): string {
  if (value === undefined || value === null) {
    throw new LocusError('invalid_instruction', `${SYNTAX_ERROR_PREFIX} The instruction source is missing: send the HiveScript program as a string, such as "when object(type=\\"scooter\\") then delete()".`);
  }
  if (typeof value !== 'string') {
    throw new LocusError('invalid_instruction', `${SYNTAX_ERROR_PREFIX} The instruction source must be a string of HiveScript (got ${describe(value)}).`);
  }
  if (value.length > maxChars) {
    throw new LocusError('too_large', `the instruction source is ${value.length} characters long; at most ${maxChars} are allowed (LOCUS_INSTRUCTION_MAX_SOURCE_CHARS)`);
  }
  return value;
}

/** A create: the source is required (a missing one is a syntax error), label and data optional. */
export function parseInstructionCreate(id: string, body: unknown, maxSourceChars: number): InstructionCreate {
  const object = readBody(id, body);
  const source = parseSource(object.instruction, maxSourceChars);
  const label = object.label === undefined ? null : parseLabel(object.label, 'label');
  const data: Data = object.data === undefined ? {} : parseData(object.data, 'data');
  return { label, source, data };
}

/** An update: any of the three; a null label clears it, data merges (null removes a key). */
export function parseInstructionChanges(id: string, body: unknown, maxSourceChars: number): InstructionChanges {
  const object = readBody(id, body);
  const changes: InstructionChanges = {};
  if (object.instruction !== undefined) changes.source = parseSource(object.instruction, maxSourceChars);
  if (object.label !== undefined) changes.label = parseLabel(object.label, 'label');
  if (object.data !== undefined) changes.data = parseDataPatch(object.data, 'data');
  return changes;
}
