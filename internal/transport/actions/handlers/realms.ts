/**
 * v1 realm actions (hivekit-compat.md §4.1, §8): `rea` `cre`, `rea`, `lis`, `upd`, `del`, in
 * the caller's tenant. The realm is named by `id`. Create and list name no realm for the
 * dispatcher (it counts them against the rate limit; a missing `id` is a 400 here); read,
 * update and delete are entered by the dispatcher (403, 429, 404 `unknown realm <id>`).
 * Create, update and delete also need realm-management rights (auth/rights.ts mayManageRealm:
 * tenant JWTs, admin tokens), checked here. Each change is published once on the tenant's
 * channel by RealmService.
 *
 * Replies: `cre`/`upd`/`del` → `res:"suc"` alone; `rea` → `dat:{"id","lab","dat"}` (`dat`
 * always present, `{}` when empty; `lab` null when unset); `lis` → `dat`: realm id →
 * `{"id","lab","dat"}` of the tenant's realms the caller may read, no paging.
 */
import type { Principal, Right } from '../../../auth/principal.js';
import { mayManageRealm, realmAllows } from '../../../auth/rights.js';
import { parseId } from '../../../domain/ids.js';
import type { Realm } from '../../../domain/types.js';
import { LocusError } from '../../../errors.js';
import type { RealmView } from '../../../service/views.js';
import type { V1Handler, V1HandlerTable, V1Message } from '../v1-handler.js';
import type { HandlerDeps } from './deps.js';

/** A realm on the v1 wire. */
export interface V1Realm {
  id: string;
  lab: string | null;
  dat: RealmView['data'];
}

export function v1Realm(view: RealmView): V1Realm {
  return { id: view.id, lab: view.label, dat: view.data };
}

function requireManagement(principal: Principal, name: string, right: Right): void {
  if (!mayManageRealm(principal, name, right)) throw new LocusError('forbidden', 'this token may not manage realms');
}

/** The label and data keys of a create or update body, from `lab` and `dat` as sent. */
function entityBody(message: V1Message): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  if (message.raw.lab !== undefined) body.label = message.raw.lab;
  if (message.raw.dat !== undefined) body.data = message.raw.dat;
  return body;
}

/** The realm the dispatcher entered (realm 'id' handlers always get one). */
function entered(realm: Realm | null): Realm {
  if (realm === null) throw new LocusError('internal', 'realm action without a realm');
  return realm;
}

export function realmsHandlers(deps: HandlerDeps): V1HandlerTable {
  const { realms } = deps;
  const cre: V1Handler = {
    realm: 'none',
    need: 'C',
    async run(message, _realm, caller) {
      const name = parseId(message.raw.id, 'realm');
      requireManagement(caller.principal, name, 'C');
      await realms.create(caller.principal.tenant, name, entityBody(message), { labelRequired: false });
      return {};
    },
  };
  const rea: V1Handler = {
    realm: 'id',
    need: 'R',
    async run(_message, realm) {
      const { tenant, name } = entered(realm);
      return { dat: v1Realm(await realms.read(tenant, name)) };
    },
  };
  const lis: V1Handler = {
    realm: 'none',
    need: 'R',
    async run(_message, _realm, caller) {
      const { principal } = caller;
      const dat: Record<string, V1Realm> = {};
      for (const realm of await realms.list(principal.tenant)) {
        if (realmAllows(principal, realm.name, 'R')) dat[realm.name] = { id: realm.name, lab: realm.label, dat: realm.data };
      }
      return { dat };
    },
  };
  const upd: V1Handler = {
    realm: 'id',
    need: 'U',
    async run(message, realm, caller) {
      const { tenant, name } = entered(realm);
      requireManagement(caller.principal, name, 'U');
      await realms.update(tenant, name, entityBody(message));
      return {};
    },
  };
  const del: V1Handler = {
    realm: 'id',
    need: 'D',
    async run(_message, realm, caller) {
      const { tenant, name } = entered(realm);
      requireManagement(caller.principal, name, 'D');
      await realms.delete(tenant, name);
      return {};
    },
  };
  return { rea: { cre, rea, lis, upd, del } };
}
