/**
 * v1 history (hivekit-compat.md 7.1, 12.4): `his rea` with the object id in `id`, the realm
 * in `rea` and `dat:{sta,end}` (ISO 8601 or Unix ms, inclusive, on the fix time). The reply's
 * `dat` is an array, oldest first, one record per stored fix:
 * `{"id","lab","loc":{zero-filled short keys},"dat":{the object's data after that write}}`
 * (`lab` left out when the object had no label then). An unknown object, or nothing in the
 * range: `[]`. At most 10,000 records; when more remain, the reply carries the cursor in
 * `nxt`, which `dat.nxt` of the next request continues from (locus extension).
 */
import { checkAllowedOn } from '../../../auth/rights.js';
import { parseV1HistoryDat } from '../../../domain/history-query.js';
import { locationRecord } from '../v1-records.js';
import { invalid } from '../../../errors.js';
import type { HistoryEntry } from '../../../store/port.js';
import type { V1HandlerTable } from '../v1-handler.js';
import type { HandlerDeps } from './deps.js';

/** The most records one `his rea` reply holds (the list page maximum of decisions.md). */
export const MAX_HISTORY_RECORDS = 10_000;

/** One history record of the v1 reply. */
export function v1HistoryRecord(id: string, entry: HistoryEntry): Record<string, unknown> {
  const record: Record<string, unknown> = { id };
  if (entry.label !== null) record.lab = entry.label;
  record.loc = locationRecord(entry.location);
  record.dat = entry.data;
  return record;
}

export function historyHandlers(deps: HandlerDeps): V1HandlerTable {
  return {
    his: {
      rea: {
        realm: 'rea',
        need: 'R',
        async run(message, realm, caller) {
          if (realm === null) throw new Error('his rea runs in a realm');
          const id = message.raw.id;
          if (typeof id !== 'string') throw invalid('id must be the object id (a string)', 'invalid_request');
          // R on the object's id (`per`): 403 outside the grant.
          checkAllowedOn(caller.principal, realm.name, 'R', id);
          const query = parseV1HistoryDat(message.raw.dat, MAX_HISTORY_RECORDS);
          const page = await deps.objects.historyEntries(realm, id, query, 'empty');
          const answer: Record<string, unknown> = { dat: page.items.map((entry) => v1HistoryRecord(id, entry)) };
          if (page.next !== null) answer.nxt = page.next;
          return answer;
        },
      },
    },
  };
}
