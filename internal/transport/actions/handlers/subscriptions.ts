/**
 * v1 `sub` actions (hivekit-compat.md 4.4, section 5): `cre`, `upd`, `del` of Hivekit
 * subscriptions, served by service/live (LiveSubscriptions). Subscriptions live on a
 * connection (WebSocket or TCP); over HTTP they are refused with 400.
 *
 * The realm is resolved here (`realm: 'none'`), because the realm-events subscription names
 * the pseudo-realm `sys` (compat 5.2, 12.6): `dat.typ:"sys"` never enters a realm (it watches
 * the caller's tenant); every other kind enters `rea` (or the opaque token's own realm) with
 * the read right, like any realm-scoped action (401/403/429, 404 `unknown realm <id>`).
 * `upd` and `del` act on the connection's own subscription of that id (404
 * `unknown subscription <id>`); their `rea` is not needed.
 */
import { describe, isJsonObject } from '../../../domain/ids.js';
import type { Realm } from '../../../domain/types.js';
import { invalid } from '../../../errors.js';
import type { RealmRef } from '../../../service/live/live-subscriptions.js';
import type { V1Caller, V1Connection, V1Handler, V1HandlerTable, V1Message } from '../v1-handler.js';
import { createSubscription, updateSubscription } from '../subscription-options.js';
import type { HandlerDeps } from './deps.js';

/** Longest subscription id accepted (the client's are about 40 characters). */
const maxIdLength = 256;

function subscriptionId(message: V1Message): string {
  const id = message.raw.id;
  if (typeof id !== 'string' || id === '' || id.length > maxIdLength) {
    throw invalid(`id must be the subscription id: a non-empty string of at most ${maxIdLength} characters (got ${describe(id)})`, 'invalid_id');
  }
  return id;
}

function connectionOf(caller: V1Caller): V1Connection {
  if (caller.connection === null) {
    throw invalid('subscriptions need a WebSocket or TCP connection to push to; HTTP has no push channel');
  }
  return caller.connection;
}

/** The realm as the engine keys it (storage key) and shows it (the name the tenant knows). */
function realmRefOf(realm: Realm): RealmRef {
  return { key: realm.id, name: realm.name, tenant: realm.tenant, label: realm.label, data: realm.data };
}

export function subscriptionsHandlers(deps: HandlerDeps): V1HandlerTable {
  const cre: V1Handler = {
    realm: 'none',
    need: 'R',
    async run(message, _realm, caller) {
      const connection = connectionOf(caller);
      const id = subscriptionId(message);
      const dat = message.raw.dat;
      let realm: RealmRef | null = null;
      if (!(isJsonObject(dat) && dat.typ === 'sys')) {
        const rea = message.raw.rea ?? caller.principal.realm ?? undefined;
        if (typeof rea !== 'string' || rea === '') {
          throw invalid(`rea must name the realm to subscribe to (got ${describe(rea)}); realm events use "rea":"sys" with "dat":{"typ":"sys"}`);
        }
        const entered = await deps.access.enterRealm(caller.principal, rea, 'R');
        realm = realmRefOf(entered);
      } else {
        await deps.access.countAction(caller.principal);
      }
      await createSubscription(deps.live, connection, id, realm, dat);
      return {};
    },
  };
  const upd: V1Handler = {
    realm: 'none',
    need: 'R',
    async run(message, _realm, caller) {
      const connection = connectionOf(caller);
      await deps.access.countAction(caller.principal);
      await updateSubscription(deps.live, connection, subscriptionId(message), message.raw.dat);
      return {};
    },
  };
  const del: V1Handler = {
    realm: 'none',
    need: 'R',
    async run(message, _realm, caller) {
      const connection = connectionOf(caller);
      await deps.access.countAction(caller.principal);
      deps.live.delete(connection, subscriptionId(message));
      return {};
    },
  };
  return { sub: { cre, upd, del } };
}
