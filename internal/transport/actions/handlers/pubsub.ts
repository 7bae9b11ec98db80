/**
 * v1 realm pub/sub (hivekit-compat.md 4.8): `rea` `sub`, `uns` and `pub`, the realm named in
 * the message's `id`. Subscriptions need a push channel (WebSocket or TCP); publishing works
 * over HTTP too and reaches the subscribed connections. Rights: `sub`/`uns` need R (reading
 * what others publish); `pub` needs U (a publication speaks about the realm's objects, as an
 * update does: the data providers that update objects are the ones that publish).
 *
 * `per` ids: `pub` needs U on its `idp` (the literal id it publishes under; `*` when absent),
 * else 403 and nothing is published. `sub` takes any pattern (a pattern is no entity id);
 * instead each delivery goes only to subscribers that may read (R) the publication's `idp`
 * (service/pubsub.ts), so a subscription never hears of ids outside its token's grant.
 */
import { checkAllowedOn } from '../../../auth/rights.js';
import type { Realm } from '../../../domain/types.js';
import { parsePublish, parseSubscribe } from '../../../domain/pubsub-input.js';
import { invalid } from '../../../errors.js';
import type { PubSubRealm } from '../../../service/pubsub.js';
import type { V1Answer, V1Caller, V1Connection, V1HandlerTable } from '../v1-handler.js';
import type { HandlerDeps } from './deps.js';

/** The realm's storage key and the name its tenant knows. */
function pubSubRealm(realm: Realm): PubSubRealm {
  return { key: realm.id, name: realm.name };
}

function connectionOf(caller: V1Caller, act: 'sub' | 'uns'): V1Connection {
  if (caller.connection === null) {
    throw invalid(`rea ${act} needs a WebSocket or TCP connection: HTTP has no channel to deliver publications on`);
  }
  return caller.connection;
}

function realmOf(realm: Realm | null): Realm {
  if (realm === null) throw new Error('pub/sub handlers name their realm in id');
  return realm;
}

/** Runs a synchronous action: its result, or what it threw, as the handler's promise. */
function answer(action: () => V1Answer): Promise<V1Answer> {
  try {
    return Promise.resolve(action());
  } catch (err) {
    return Promise.reject(err instanceof Error ? err : new Error(String(err)));
  }
}

export function pubsubHandlers(deps: HandlerDeps): V1HandlerTable {
  return {
    rea: {
      sub: {
        realm: 'id',
        need: 'R',
        run: (message, realm, caller) => answer(() => {
          const connection = connectionOf(caller, 'sub');
          deps.pubsub.subscribe(connection, pubSubRealm(realmOf(realm)), parseSubscribe(message.raw));
          return {};
        }),
      },
      uns: {
        realm: 'id',
        need: 'R',
        run: (message, realm, caller) => answer(() => {
          const connection = connectionOf(caller, 'uns');
          deps.pubsub.unsubscribe(connection, realmOf(realm).id, parseSubscribe(message.raw));
          return {};
        }),
      },
      pub: {
        realm: 'id',
        need: 'U',
        run: (message, realm, caller) => answer(() => {
          const publication = parsePublish(message.raw);
          checkAllowedOn(caller.principal, realmOf(realm).name, 'U', publication.idp);
          deps.pubsub.publish(realmOf(realm).id, publication);
          return {};
        }),
      },
    },
  };
}
