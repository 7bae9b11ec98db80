/**
 * The whole v1 action table: the fragments of handlers/*.ts joined per `typ` (realm actions
 * come from several modules: realms.ts, search.ts and pubsub.ts all add `typ:"rea"` acts).
 */
import type { V1Handler, V1HandlerTable } from '../v1-handler.js';
import { areasHandlers } from './areas.js';
import type { HandlerDeps } from './deps.js';
import { historyHandlers } from './history.js';
import { instructionsHandlers } from './instructions.js';
import { legacyEventsHandlers } from './legacy-events.js';
import { objectsHandlers } from './objects.js';
import { pubsubHandlers } from './pubsub.js';
import { realmsHandlers } from './realms.js';
import { searchHandlers } from './search.js';
import { subscriptionsHandlers } from './subscriptions.js';
import { systemHandlers } from './system.js';

export function v1Handlers(deps: HandlerDeps): V1HandlerTable {
  const fragments = [
    objectsHandlers(deps),
    areasHandlers(deps),
    realmsHandlers(deps),
    systemHandlers(deps),
    subscriptionsHandlers(deps),
    searchHandlers(deps),
    historyHandlers(deps),
    pubsubHandlers(deps),
    legacyEventsHandlers(deps),
    instructionsHandlers(deps),
  ];
  const table: Record<string, Record<string, V1Handler>> = {};
  for (const fragment of fragments) {
    for (const [typ, acts] of Object.entries(fragment)) {
      const into = (table[typ] ??= {});
      for (const [act, handler] of Object.entries(acts)) {
        if (Object.hasOwn(into, act)) throw new Error(`v1 action ${typ}/${act} is defined twice`);
        into[act] = handler;
      }
    }
  }
  return table;
}
