/**
 * The locus extension's `evt` model (docs/protocol.md, "Geofence events"): `sub`/`sub` asks
 * for the realm's `loc`/`ent`/`exi`/`del` events (optionally only some objects and areas:
 * `dat.objects`, `dat.areas`), `sub`/`uns` ends one subscription (`id`) or all of the realm's.
 * A connection that uses them gets `{"typ":"evt",…}` messages; Hivekit subscriptions
 * (`sub` `cre`/`upd`/`del`, handlers/subscriptions.ts) never do.
 */
import { readFilter } from '../../../auth/rights.js';
import { parseIdAt } from '../../../domain/ids.js';
import type { Realm } from '../../../domain/types.js';
import { invalid } from '../../../errors.js';
import { parseSubscriptionFilter, type EventSink } from '../../../service/subscriptions.js';
import type { V1Caller, V1HandlerTable } from '../v1-handler.js';
import type { HandlerDeps } from './deps.js';
import { optionsOf } from './v1-input.js';

function sinkOf(caller: V1Caller): EventSink {
  if (caller.sink === undefined || caller.sink === null) {
    throw invalid('subscriptions need a connection the server can push to: use WebSocket or TCP');
  }
  return caller.sink;
}

export function legacyEventsHandlers(deps: HandlerDeps): V1HandlerTable {
  const { subscriptions } = deps;
  return {
    sub: {
      sub: {
        realm: 'rea',
        need: 'R',
        run: (message, realm, caller) => {
          const sink = sinkOf(caller);
          const where = realm as Realm;
          // Events naming objects or areas the token may not read (`per` R) are not delivered.
          const filter = { ...parseSubscriptionFilter(optionsOf(message)), readable: readFilter(caller.principal, where.name) };
          const id = subscriptions.subscribe(sink, where.id, filter);
          return Promise.resolve({ dat: { id } });
        },
      },
      uns: {
        realm: 'rea',
        need: 'R',
        run: (message, realm, caller) => {
          const sink = sinkOf(caller);
          const given = message.raw.id;
          const ids = subscriptions.unsubscribe(sink, (realm as Realm).id, given === undefined ? undefined : parseIdAt(given, 'id'));
          return Promise.resolve({ dat: { ids } });
        },
      },
    },
  };
}
