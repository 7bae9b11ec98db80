/**
 * v1 `obj` actions (compat 4.2): `cre` (create, or update an existing object), `upd` (update;
 * 404 `unknown object <id>` when missing, checked by the store inside the write), `set`
 * (create or update, no reply on success), `rea`, `lis`, `del`, and the locus extension `blk`
 * (bulk write of `dat.objects`, entries in the REST form `{id, label, location, data}`).
 * The writes hand their work to the store before their first await (`ordered`), so that
 * pipelined writes share one commit.
 */
import { parseAttributeConditions } from '../../../domain/attribute-conditions.js';
import { parseCursor, parseFields, parseFilterParam, parseLimit, parseShapeValue } from '../../../domain/list-query.js';
import type { Realm } from '../../../domain/types.js';
import { LocusError, unknownObject } from '../../../errors.js';
import type { UpsertEntry, UpsertOptions } from '../../../service/objects.js';
import type { ObjectListQuery } from '../../../store/port.js';
import type { V1Answer, V1Batch, V1Handler, V1HandlerTable, V1Message } from '../v1-handler.js';
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

  /** Creates or updates; `mustExist`: update only. The store is called before the first await. */
  const write = (message: V1Message, realm: Realm | null, mustExist: boolean): Promise<void> => {
    let written: Promise<unknown>;
    try {
      const id = idOf(message);
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
    run: (messages, realm) => {
      const entries: UpsertEntry[] = [];
      const slots: (number | Error)[] = messages.map((message) => {
        try {
          const entry: UpsertEntry = { id: idOf(message), body: objectWriteBody(message), mustExist: message.act === 'upd' };
          const tasks = tasksOf(message);
          if (tasks !== undefined) entry.tasks = tasks;
          entries.push(entry);
          return entries.length - 1;
        } catch (err) {
          return v1Wording(err);
        }
      });
      const written = objects.upsertEach(realm, entries);
      return messages.map((message, k) => {
        const slot = slots[k] as number | Error;
        if (slot instanceof Error) return Promise.reject(slot);
        return written.then(
          (results) => {
            const result = results[slot];
            if (result instanceof LocusError) throw v1Wording(result);
            return answerOf(message);
          },
          (err: unknown) => {
            throw v1Wording(err);
          },
        );
      });
    },
  };

  const cre: V1Handler = {
    realm: 'rea',
    need: 'C',
    ordered: true,
    batch,
    run: (message, realm) => write(message, realm, false).then(() => done),
  };
  const set: V1Handler = {
    realm: 'rea',
    need: 'C',
    ordered: true,
    batch,
    run: (message, realm) => write(message, realm, false).then(() => null),
  };
  const upd: V1Handler = {
    realm: 'rea',
    need: 'U',
    ordered: true,
    batch,
    run: (message, realm) => write(message, realm, true).then(() => done),
  };

  const rea: V1Handler = {
    realm: 'rea',
    need: 'R',
    run: async (message, realm) => {
      const { id } = realm as Realm;
      const obj = await objects.read(realm as Realm, idOf(message));
      return { dat: objectRecord(obj, presence.statusOf(id, obj.id)) };
    },
  };

  const lis: V1Handler = {
    realm: 'rea',
    need: 'R',
    run: async (message, realm) => {
      const where = realm as Realm;
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
      const page = await objects.page(where, query);
      const entries: [string, V1ObjectListEntry][] = page.items.map((obj) => [obj.id, objectListEntry(obj, presence.statusOf(where.id, obj.id), fields)]);
      const answer: Record<string, unknown> = { dat: Object.fromEntries(entries) };
      if (page.next !== null) answer.nxt = page.next;
      return answer;
    },
  };

  const del: V1Handler = {
    realm: 'rea',
    need: 'D',
    run: async (message, realm) => {
      await objects.delete(realm as Realm, idOf(message), unknownObject);
      return done;
    },
  };

  const blk: V1Handler = {
    realm: 'rea',
    need: 'C',
    ordered: true,
    weight: bulkWeight,
    run: async (message, realm) => {
      const { count } = await objects.bulk(realm as Realm, message.raw.dat ?? {});
      return { dat: { count } };
    },
  };

  return { obj: { cre, set, upd, rea, lis, del, blk } };
}
