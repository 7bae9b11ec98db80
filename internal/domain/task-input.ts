/**
 * Task create and update bodies (REST form: label, description, status, steps, targetId,
 * location, data), and the merge of an update. Pure. v1 maps its short keys onto this form
 * (transport/actions/handlers/tasks.ts), so both APIs share every rule.
 *
 * A task points at exactly one of a target object (`targetId`) or a place (`location`): a
 * create needs one and refuses both; an update may switch from one to the other by giving
 * the new one (the old one is dropped), never both at once, and never null (nothing would be left).
 */
import { invalid } from '../errors.js';
import { parseData, parseDataPatch } from './data.js';
import { describe, hasLoneSurrogate, parseIdAt, quote, requireObject } from './ids.js';
import { parseLocation } from './location.js';
import { mergeData } from './object.js';
import { parseLabel } from './object-input.js';
import { TASK_STATUSES, type TaskPatch, type TaskRecord, type TaskStatus, type TaskStep } from './task.js';
import type { Data } from './types.js';

/** Longest description, in characters (Unicode code points): a paragraph or two of instructions for whoever carries the task out. */
export const MAX_DESCRIPTION_CHARS = 16_384;

/** Most steps one task holds. */
export const MAX_TASK_STEPS = 1000;

export const DEFAULT_TASK_STATUS: TaskStatus = '$hkt_not_started';

const ALLOWED = ['id', 'label', 'description', 'status', 'steps', 'targetId', 'location', 'data'];
const STEP_KEYS = ['label', 'status', 'data'];
const STATUS_LIST = TASK_STATUSES.map((status) => JSON.stringify(status)).join(', ');

export function isTaskStatus(value: unknown): value is TaskStatus {
  return (TASK_STATUSES as readonly unknown[]).includes(value);
}

/** A status code among the `$hkt_*` codes (compat 3.3). */
export function parseTaskStatus(value: unknown, path: string): TaskStatus {
  if (isTaskStatus(value)) return value;
  throw invalid(`${path} must be one of ${STATUS_LIST} (got ${describe(value)})`);
}

/** A description: a string of at most MAX_DESCRIPTION_CHARS characters (valid Unicode), or null to clear it. */
export function parseDescription(value: unknown, path: string): string | null {
  if (value === null) return null;
  if (typeof value !== 'string') throw invalid(`${path} must be a string or null (got ${describe(value)})`);
  if (value.length > MAX_DESCRIPTION_CHARS && (value.length > 2 * MAX_DESCRIPTION_CHARS || [...value].length > MAX_DESCRIPTION_CHARS)) {
    throw invalid(`${path} is too long: at most ${MAX_DESCRIPTION_CHARS} characters are allowed`);
  }
  if (hasLoneSurrogate(value)) throw invalid(`${path} holds an unpaired UTF-16 surrogate (not valid Unicode)`);
  return value;
}

/**
 * Steps: an array of at most MAX_TASK_STEPS objects `{label?, status?, data?}`, each with the
 * rules of a task's own fields (status default `$hkt_not_started`, data as object data with
 * keys set to null left out). A given array replaces the task's steps whole.
 */
export function parseSteps(value: unknown, path: string): TaskStep[] {
  if (!Array.isArray(value)) throw invalid(`${path} must be an array of step objects {label, status, data} (got ${describe(value)})`);
  const items: unknown[] = value;
  if (items.length > MAX_TASK_STEPS) throw invalid(`${path} has ${items.length} steps; at most ${MAX_TASK_STEPS} are allowed`);
  return items.map((item, i) => {
    const where = `${path}[${i}]`;
    const step = requireObject(item, where, 'invalid_request');
    for (const key of Object.keys(step)) {
      if (!STEP_KEYS.includes(key)) throw invalid(`unknown key ${quote(key)} in ${where}; allowed: ${STEP_KEYS.join(', ')}`);
    }
    return {
      label: step.label === undefined ? null : parseLabel(step.label, `${where}.label`),
      status: step.status === undefined ? DEFAULT_TASK_STATUS : parseTaskStatus(step.status, `${where}.status`),
      data: step.data === undefined ? {} : parseData(step.data, `${where}.data`),
    };
  });
}

/** The body as a JSON object, with unknown keys and a mismatching `id` rejected. */
function readBody(id: string, body: unknown): Record<string, unknown> {
  const object = requireObject(body, '', 'invalid_request');
  for (const key of Object.keys(object)) {
    if (!ALLOWED.includes(key)) throw invalid(`unknown key ${quote(key)} in the request body; allowed: ${ALLOWED.join(', ')}`);
  }
  const given = object.id;
  if (given !== undefined && given !== id) {
    throw invalid(`id in the request body (${describe(given)}) differs from the task id in the path (${quote(id)}); omit it or make them equal`, 'invalid_id');
  }
  return object;
}

const bothTargets = (): Error =>
  invalid('a task has either a target object (targetId) or a location, not both: give only one of them');

/** The target of a body: targetId and location, at most one of them given (null is not a target). */
function parseTarget(object: Record<string, unknown>, now: string): { targetId?: string; location?: TaskRecord['location'] } {
  const { targetId, location } = object;
  if (targetId !== undefined && location !== undefined) throw bothTargets();
  if (targetId === null) throw invalid('targetId must be an object id; null is not allowed (give a location instead to move the task to a place)', 'invalid_id');
  if (location === null) {
    throw invalid('location must be a location object; null is not allowed (give a targetId instead to point the task at an object)', 'invalid_location');
  }
  if (targetId !== undefined) return { targetId: parseIdAt(targetId, 'targetId') };
  if (location !== undefined) return { location: parseLocation(location, now, 'location') };
  return {};
}

/** A task id (the identifier rules of ids.ts). */
export function parseTaskId(value: unknown): string {
  return parseIdAt(value, 'task id');
}

/**
 * A task create: exactly one of targetId and location (else a 400 that says so), the other
 * fields optional (status `$hkt_not_started`, no steps, no label or description, data `{}`
 * with keys set to null left out). A location without time is stamped `now`.
 */
export function parseTaskCreate(id: string, body: unknown, now: string): TaskRecord {
  const taskId = parseTaskId(id);
  const object = readBody(taskId, body);
  const target = parseTarget(object, now);
  if (target.targetId === undefined && target.location === undefined) {
    throw invalid('a task needs either a target object (targetId) or a location: give one of them');
  }
  const data: Data = object.data === undefined ? {} : parseData(object.data, 'data');
  return {
    id: taskId,
    label: object.label === undefined ? null : parseLabel(object.label, 'label'),
    description: object.description === undefined ? null : parseDescription(object.description, 'description'),
    status: object.status === undefined ? DEFAULT_TASK_STATUS : parseTaskStatus(object.status, 'status'),
    steps: object.steps === undefined ? [] : parseSteps(object.steps, 'steps'),
    targetId: target.targetId ?? null,
    location: target.location ?? null,
    data,
    created: now,
    updated: now,
  };
}

/**
 * A task update: every field optional. label and description: null clears; status: a code;
 * steps: replace the old ones whole ([] clears); data: merged key by key, null removes a key;
 * targetId or location (not both, not null): the task's new target, replacing the other.
 */
export function parseTaskPatch(id: string, body: unknown, now: string): TaskPatch {
  const object = readBody(parseTaskId(id), body);
  const patch: TaskPatch = {};
  if (object.label !== undefined) patch.label = parseLabel(object.label, 'label');
  if (object.description !== undefined) patch.description = parseDescription(object.description, 'description');
  if (object.status !== undefined) patch.status = parseTaskStatus(object.status, 'status');
  if (object.steps !== undefined) patch.steps = parseSteps(object.steps, 'steps');
  const target = parseTarget(object, now);
  if (target.targetId !== undefined) patch.targetId = target.targetId;
  if (target.location !== undefined) patch.location = target.location;
  if (object.data !== undefined) patch.data = parseDataPatch(object.data, 'data');
  return patch;
}

/**
 * The task after an update: given fields replace, data merges (null removes a key), a new
 * target replaces the old one of either kind; `updated` becomes `now`.
 */
export function applyTaskPatch(old: TaskRecord, patch: TaskPatch, now: string): TaskRecord {
  const retarget = patch.targetId !== undefined && patch.targetId !== null;
  const relocate = patch.location !== undefined && patch.location !== null;
  return {
    id: old.id,
    label: patch.label === undefined ? old.label : patch.label,
    description: patch.description === undefined ? old.description : patch.description,
    status: patch.status ?? old.status,
    steps: patch.steps ?? old.steps,
    targetId: retarget ? (patch.targetId as string) : relocate ? null : old.targetId,
    location: relocate ? (patch.location as TaskRecord['location']) : retarget ? null : old.location,
    data: mergeData(old.data, patch.data),
    created: old.created,
    updated: now,
  };
}
