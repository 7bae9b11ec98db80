/**
 * v1 `obj` actions (compat 4.2): `cre` (create, or update an existing object), `upd` (update;
 * 404 `unknown object <id>` when missing, checked by the store inside the write), `set`
 * (create or update, no reply on success), `rea`, `lis`, `del`, and the locus extension `blk`
 * (bulk write of `dat.objects`, entries in the REST form `{id, label, location, data}`).
 * The writes call the object service before their first await (`ordered`): it applies
 * writes of one object in call order, and pipelined writes share one commit.
 *
 * Rights (`per`, docs/api.md): `cre`, `set`, `upd` and `blk` create or update, so they need U
 * on the object's id, as REST's create-or-update does (C alone does not let a token overwrite
 * an object it may not update); `rea` R, `del` D on the id; `lis` shows the objects whose id
 * the token may read. An id outside the grant is 403 and nothing is written; in a frame of
 * writes only those messages are refused; a `blk` is refused whole (bulk is all-or-nothing).
 */
import { checkAllowedOn, idFilter, idForbidden, readFilter } from '../../../auth/rights.js';
import { parseAttributeConditions } from '../../../domain/attribute-conditions.js';
import { parseCursor, parseFields, parseFilterParam, parseLimit, parseShapeValue } from '../../../domain/list-query.js';
import type { Realm } from '../../../domain/types.js';
import { LocusError, unknownObject } from '../../../errors.js';
import type { UpsertEntry, UpsertOptions } from '../../../service/objects.js';
import type { ObjectListQuery } from '../../../store/port.js';
import type { V1Answer, V1Batch, V1Caller, V1Handler, V1HandlerTable, V1Message } from '../v1-handler.js';
import { objectListEntry, objectRecord, type V1ObjectListEntry } from '../v1-records.js';
import { shapeFromV1Keys } from '../v1-shapes.js';
import type { HandlerDeps } from './deps.js';
import { idOf, objectWriteBody, optionsOf, tasksOf, v1Wording } from './v1-input.js';

const done = {};

/** The objects a `blk` writes (the dispatcher's yield rule). */
function bulkWeight(message: V1Message): number {
  const dat = message.raw.dat;
  const objects = typeof dat === 'object' && dat !== null ? (dat as Record<string, unknown>).objects : undefined;
  return Array.isArray(objects) ? objects.length : 1;
}

export function objectsHandlers(deps: HandlerDeps): V1HandlerTable {
  const { objects, presence, limits } = deps;

  /** Creates or updates; `mustExist`: update only. The service is called before the first await. */
  const write = (message: V1Message, realm: Realm | null, mustExist: boolean, caller: V1Caller): Promise<void> => {
    let written: Promise<unknown>;
    try {
      const id = idOf(message);
      checkAllowedOn(caller.principal, (realm as Realm).name, 'U', id);
      const tasks = tasksOf(message);
      const options: UpsertOptions | undefined = mustExist || tasks !== undefined ? { mustExist, tasks } : undefined;
      written = objects.upsert(realm as Realm, id, objectWriteBody(message), options);
    } catch (err) {
      return Promise.reject(v1Wording(err));
    }
    return written.then(
      () => undefined,
      (err: unknown) => {
        throw v1Wording(err);
      },
    );
  };

  /** What a successful write answers: nothing for `set`, `res:"suc"` for the others. */
  const answerOf = (message: V1Message): V1Answer => (message.act === 'set' ? null : done);

  /** Consecutive writes of a frame in one store call (the dispatcher's runs; distinct ids). */
  const batch: V1Batch = {
    group: 'obj-write',
    run: (messages, realm, caller) => {
      const entries: UpsertEntry[] = [];
      const writable = idFilter(caller.principal, realm.name, 'U');
      const slots: (number | Error)[] = messages.map((message) => {
        try {
          const id = idOf(message);
          if (writable !== null && !writable(id)) return idForbidden('U', id);
          const entry: UpsertEntry = { id, body: objectWriteBody(message), mustExist: message.act === 'upd' };
          const tasks = tasksOf(message);
          if (tasks !== undefined) entry.tasks = tasks;
          entries.push(entry);
          return entries.length - 1;
        } catch (err) {
          return v1Wording(err);
        }
      });
      const written = entries.length === 0 ? Promise.resolve([]) : objects.upsertEach(realm, entries);
      return written.then(
        (results) =>
          messages.map((message, k) => {
            const slot = slots[k] as number | Error;
            if (slot instanceof Error) return slot;
            const result = results[slot];
            return result instanceof LocusError ? v1Wording(result) : answerOf(message);
          }),
        (err: unknown) => {
          // The store failed as a whole: the messages refused before it keep their own error.
          const error = v1Wording(err);
          return slots.map((slot) => (slot instanceof Error ? slot : error));
        },
      );
    },
  };

  const cre: V1Handler = {
    realm: 'rea',
    need: 'U',
    ordered: true,
    batch,
    run: (message, realm, caller) => write(message, realm, false, caller).then(() => done),
  };
  const set: V1Handler = {
    realm: 'rea',
    need: 'U',
    ordered: true,
    batch,
    run: (message, realm, caller) => write(message, realm, false, caller).then(() => null),
  };
  const upd: V1Handler = {
    realm: 'rea',
    need: 'U',
    ordered: true,
    batch,
    run: (message, realm, caller) => write(message, realm, true, caller).then(() => done),
  };

  const rea: V1Handler = {
    realm: 'rea',
    need: 'R',
    run: async (message, realm, caller) => {
      const { id, name } = realm as Realm;
      checkAllowedOn(caller.principal, name, 'R', idOf(message));
      const obj = await objects.read(realm as Realm, idOf(message));
      return { dat: objectRecord(obj, presence.statusOf(id, obj.id)) };
    },
  };

  const lis: V1Handler = {
    realm: 'rea',
    need: 'R',
    run: async (message, realm, caller) => {
      const where = realm as Realm;
      const readable = readFilter(caller.principal, where.name);
      const dat = optionsOf(message);
      // Hivekit's keys (atr, fie, sha) and locus's (filter, fields, shape, limit, cursor) together.
      const fie = parseFields(dat.fie);
      const named = parseFields(dat.fields);
      const fields = fie === null && named === null ? null : [...new Set([...(fie ?? []), ...(named ?? [])])];
      const filter = [
        ...parseAttributeConditions(dat.atr, limits.maxFilterConditions),
        ...parseFilterParam(dat.filter, limits.maxFilterConditions),
      ];
      const shape = dat.sha !== undefined && dat.sha !== null ? shapeFromV1Keys(dat.sha, limits.maxVertices) : parseShapeValue(dat.shape, limits.maxVertices);
      // No paging unless there are more than a page's worth (compat 11 #22).
      const query: ObjectListQuery = { limit: parseLimit(dat.limit, limits.maxPage, limits.maxPage), fields: fields ?? [] };
      const cursor = parseCursor(dat.cursor);
      if (cursor !== undefined) query.cursor = cursor;
      if (filter.length > 0) query.filter = filter;
      if (shape !== undefined) query.shape = shape;
      // Only the objects the token may read: a page may hold fewer than `limit` (even none) while `nxt` goes on.
      const page = await objects.page(where, query, readable);
      const entries: [string, V1ObjectListEntry][] = page.items.map((obj) => [obj.id, objectListEntry(obj, presence.statusOf(where.id, obj.id), fields)]);
      const answer: Record<string, unknown> = { dat: Object.fromEntries(entries) };
      if (page.next !== null) answer.nxt = page.next;
      return answer;
    },
  };

  const del: V1Handler = {
    realm: 'rea',
    need: 'D',
    run: async (message, realm, caller) => {
      checkAllowedOn(caller.principal, (realm as Realm).name, 'D', idOf(message));
      await objects.delete(realm as Realm, idOf(message), unknownObject);
      return done;
    },
  };

  const blk: V1Handler = {
    realm: 'rea',
    need: 'U',
    ordered: true,
    weight: bulkWeight,
    run: async (message, realm, caller) => {
      const where = realm as Realm;
      const { count } = await objects.bulk(where, message.raw.dat ?? {}, idFilter(caller.principal, where.name, 'U'));
      return { dat: { count } };
    },
  };

  return { obj: { cre, set, upd, rea, lis, del, blk } };
}
