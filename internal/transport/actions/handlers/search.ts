/**
 * v1 search (hivekit-compat.md 7.2, 12.2, 12.3): `rea sea` with the realm in `rea` and
 * `dat:{val, fie?, maxObjectResults?, maxAreaResults?}`. The reply's `dat` is an array of
 * match records, exactly `{"id","typ","lab","fie","val","sta","end"}` plus `"sty"` (the data
 * property) for data matches; `lab` is "" for an unlabelled entity. Matching and ranking:
 * domain/match-records.ts; service/realm-search.ts finds the records.
 */
import { readFilter } from '../../../auth/rights.js';
import type { MatchRecord } from '../../../domain/match-records.js';
import { parseV1SearchDat } from '../../../service/realm-search.js';
import type { V1HandlerTable } from '../v1-handler.js';
import type { HandlerDeps } from './deps.js';

const FIELD_CODE = { id: 'id', label: 'lab', data: 'dat' } as const;

/** A match record with the v1 short keys. */
export function v1SearchRecord(record: MatchRecord): Record<string, unknown> {
  const out: Record<string, unknown> = {
    id: record.id,
    typ: record.type === 'object' ? 'obj' : 'are',
    lab: record.label ?? '',
    fie: FIELD_CODE[record.field],
    val: record.value,
    sta: record.start,
    end: record.end,
  };
  if (record.property !== undefined) out.sty = record.property;
  return out;
}

export function searchHandlers(deps: HandlerDeps): V1HandlerTable {
  return {
    rea: {
      sea: {
        realm: 'rea',
        need: 'R',
        async run(message, realm, caller) {
          if (realm === null) throw new Error('rea sea runs in a realm');
          const query = parseV1SearchDat(message.raw.dat);
          // Only objects and areas whose id the token may read (`per` R).
          const records = await deps.search.search(realm, query, readFilter(caller.principal, realm.name));
          return { dat: records.map(v1SearchRecord) };
        },
      },
    },
  };
}
