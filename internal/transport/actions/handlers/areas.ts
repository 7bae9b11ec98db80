/**
 * v1 `are` actions (compat 4.3): `cre` (409 `area with id <id> already exists`), `upd` (label
 * and shape replace, data merges; 404 `unknown area <id>`), `rea` (the shape echoed in the
 * v1 form it was sent in), `lis` (entries exactly `{id, lab, sty}`), `del`. Shapes are
 * translated at the boundary (v1-shapes.ts).
 *
 * Rights (`per`, docs/api.md): `cre` needs C on the area's id (it never overwrites: 409),
 * `upd` U, `rea` R, `del` D; an id outside the grant is 403 and nothing changes. `lis` shows
 * the areas whose id the token may read.
 */
import { checkAllowedOn, readFilter } from '../../../auth/rights.js';
import { parseCursor, parseLimit } from '../../../domain/list-query.js';
import type { Realm } from '../../../domain/types.js';
import { invalid, LocusError, unknownArea } from '../../../errors.js';
import type { V1Handler, V1HandlerTable, V1Message } from '../v1-handler.js';
import { areaListEntry, areaRecord } from '../v1-records.js';
import { shapeFromV1 } from '../v1-shapes.js';
import type { HandlerDeps } from './deps.js';
import { idOf, optionsOf, v1Wording } from './v1-input.js';

const done = {};

/** The services' "area <id> not found" in Hivekit's words. */
function missingArea(err: unknown, id: string): Error {
  if (err instanceof LocusError && err.code === 'not_found' && err.message === `area ${id} not found`) return unknownArea(id);
  return v1Wording(err);
}

export function areasHandlers(deps: HandlerDeps): V1HandlerTable {
  const { areas, limits } = deps;

  /** `lab`, `sty`+`sha` and `dat` as the domain's area body. */
  const body = (message: V1Message, shapeRequired: boolean): Record<string, unknown> => {
    const { lab, sty, sha, dat } = message.raw;
    const out: Record<string, unknown> = {};
    if (lab !== undefined) out.label = lab;
    if (sty !== undefined || sha !== undefined) {
      if (sty === undefined) throw invalid('sty is required with sha: "rec", "cir" or "pol"', 'invalid_shape');
      if (sha === undefined) throw invalid('sha is required with sty: the shape data', 'invalid_shape');
      out.shape = shapeFromV1(sty, sha, limits.maxVertices);
    } else if (shapeRequired) {
      throw invalid('sty and sha are required: the shape type ("rec", "cir", "pol") and its data', 'invalid_shape');
    }
    if (dat !== undefined) out.data = dat;
    return out;
  };

  const cre: V1Handler = {
    realm: 'rea',
    need: 'C',
    run: async (message, realm, caller) => {
      const id = idOf(message);
      checkAllowedOn(caller.principal, (realm as Realm).name, 'C', id);
      try {
        await areas.create(realm as Realm, id, body(message, true), { labelRequired: false });
      } catch (err) {
        throw v1Wording(err);
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
        await areas.update(realm as Realm, id, body(message, false));
      } catch (err) {
        throw missingArea(err, id);
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
      try {
        return { dat: areaRecord(await areas.get(realm as Realm, id)) };
      } catch (err) {
        throw missingArea(err, id);
      }
    },
  };

  const lis: V1Handler = {
    realm: 'rea',
    need: 'R',
    run: async (message, realm, caller) => {
      const dat = optionsOf(message);
      const params: Record<string, unknown> = { limit: parseLimit(dat.limit, limits.maxPage, limits.maxPage) };
      const cursor = parseCursor(dat.cursor);
      if (cursor !== undefined) params.cursor = cursor;
      // Only the areas the token may read: a page may hold fewer than `limit` (even none) while `nxt` goes on.
      const page = await areas.list(realm as Realm, params, readFilter(caller.principal, (realm as Realm).name));
      const answer: Record<string, unknown> = { dat: Object.fromEntries(page.entries.map((entry) => [entry.id, areaListEntry(entry)])) };
      if (page.next !== null) answer.nxt = page.next;
      return answer;
    },
  };

  const del: V1Handler = {
    realm: 'rea',
    need: 'D',
    run: async (message, realm, caller) => {
      const id = idOf(message);
      checkAllowedOn(caller.principal, (realm as Realm).name, 'D', id);
      try {
        await areas.delete(realm as Realm, id);
      } catch (err) {
        throw missingArea(err, id);
      }
      return done;
    },
  };

  return { are: { cre, upd, rea, lis, del } };
}
