/**
 * v1 `tsk` actions (hivekit-compat.md 4.10): `cre` (409 `task with id <id> already exists`),
 * `upd` (given fields replace, `dat` merges, `stp` replaces; 404 `unknown task <id>`), `rea`
 * (the record, `loc` zero-filled), `lis` (id → record, in creation order), `del`. The short
 * keys are mapped onto the REST body the domain validates (domain/task-input.ts): `lab`,
 * `dsc`, `sts`, `stp` (steps `{lab, sts, dat}`), `tid`, `loc`, `dat`; other keys are ignored
 * (compat 3.7). A task has exactly one of `tid` and `loc`.
 *
 * Rights (`per`): `cre` needs C on the task's id, `upd` U, `rea` R, `del` D; an id outside the
 * grant is 403 and nothing changes. `lis` shows the tasks whose id the token may read.
 */
import { checkAllowedOn, readFilter } from '../../../auth/rights.js';
import { isJsonObject } from '../../../domain/ids.js';
import type { Realm } from '../../../domain/types.js';
import { invalid, LocusError } from '../../../errors.js';
import type { V1Handler, V1HandlerTable, V1Message } from '../v1-handler.js';
import { taskRecord } from '../v1-records.js';
import type { HandlerDeps } from './deps.js';
import { idOf, locationBody, v1Wording } from './v1-input.js';

const done = {};

const STEP_KEYS: Readonly<Record<string, string>> = { lab: 'label', sts: 'status', dat: 'data' };
const SHORT_STEP_KEYS: Readonly<Record<string, string>> = { label: 'lab', status: 'sts', data: 'dat' };
const SHORT_TASK_KEYS: Readonly<Record<string, string>> = { steps: 'stp', status: 'sts', description: 'dsc', targetId: 'tid' };

/** A step's short keys as the domain's; other keys are left out, anything but an object is the domain's to refuse. */
function stepBody(step: unknown): unknown {
  if (!isJsonObject(step)) return step;
  const out: Record<string, unknown> = {};
  for (const [short, long] of Object.entries(STEP_KEYS)) if (step[short] !== undefined) out[long] = step[short];
  return out;
}

/** The message's task fields as the domain's body. */
function taskBody(message: V1Message): Record<string, unknown> {
  const { lab, dsc, sts, stp, tid, loc, dat } = message.raw;
  const out: Record<string, unknown> = {};
  if (lab !== undefined) out.label = lab;
  if (dsc !== undefined) out.description = dsc;
  if (sts !== undefined) out.status = sts;
  if (stp !== undefined) out.steps = Array.isArray(stp) ? stp.map(stepBody) : stp;
  if (tid !== undefined && loc !== undefined) throw invalid('a task has either a target object id (tid) or a location (loc), not both: give only one of them');
  if (tid !== undefined) out.targetId = tid;
  if (loc !== undefined) out.location = locationBody(loc);
  if (dat !== undefined) out.data = dat;
  return out;
}

/** A domain message about a task body, with the v1 key names (`stp[0].sts`, `tid`, `dsc`, `loc.lon`, …). */
function taskWording(err: unknown): Error {
  if (!(err instanceof LocusError)) return v1Wording(err);
  const text = err.message
    .replace(/\bsteps\[(\d+)\]\.(label|status|data)\b/g, (_all, i: string, key: string) => `stp[${i}].${SHORT_STEP_KEYS[key] ?? key}`)
    .replace(/\bsteps\[(\d+)\]/g, 'stp[$1]')
    .replace('{label, status, data}', '{lab, sts, dat}')
    .replace(/^(steps|status|description|targetId)\b/, (key: string) => SHORT_TASK_KEYS[key] ?? key);
  const renamed = text === err.message ? err : new LocusError(err.code, text, { cause: err, headers: { ...err.headers } });
  return v1Wording(renamed);
}

export function tasksHandlers(deps: HandlerDeps): V1HandlerTable {
  const { tasks } = deps;

  const cre: V1Handler = {
    realm: 'rea',
    need: 'C',
    run: async (message, realm, caller) => {
      const id = idOf(message);
      checkAllowedOn(caller.principal, (realm as Realm).name, 'C', id);
      const body = taskBody(message);
      if (body.targetId === undefined && body.location === undefined) {
        throw invalid('a task needs either a target object id (tid) or a location (loc): give one of them');
      }
      try {
        await tasks.create(realm as Realm, id, body);
      } catch (err) {
        throw taskWording(err);
      }
      return done;
    },
  };

  const upd: V1Handler = {
    realm: 'rea',
    need: 'U',
    run: async (message, realm, caller) => {
      const id = idOf(message);
      checkAllowedOn(caller.principal, (realm as Realm).name, 'U', id);
      try {
        await tasks.update(realm as Realm, id, taskBody(message));
      } catch (err) {
        throw taskWording(err);
      }
      return done;
    },
  };

  const rea: V1Handler = {
    realm: 'rea',
    need: 'R',
    run: async (message, realm, caller) => {
      const id = idOf(message);
      checkAllowedOn(caller.principal, (realm as Realm).name, 'R', id);
      return { dat: taskRecord(await tasks.get(realm as Realm, id)) };
    },
  };

  const lis: V1Handler = {
    realm: 'rea',
    need: 'R',
    run: async (_message, realm, caller) => {
      const list = await tasks.list(realm as Realm, readFilter(caller.principal, (realm as Realm).name));
      return { dat: Object.fromEntries(list.map((task) => [task.id, taskRecord(task)])) };
    },
  };

  const del: V1Handler = {
    realm: 'rea',
    need: 'D',
    run: async (message, realm, caller) => {
      const id = idOf(message);
      checkAllowedOn(caller.principal, (realm as Realm).name, 'D', id);
      await tasks.delete(realm as Realm, id);
      return done;
    },
  };

  return { tsk: { cre, upd, rea, lis, del } };
}
