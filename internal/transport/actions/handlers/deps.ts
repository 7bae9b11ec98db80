/**
 * What the v1 handlers are built from. Each handlers/*.ts module takes the parts it needs;
 * server.ts builds one of these and hands it to handlers/index.ts.
 */
import type { Access } from '../../../service/access.js';
import type { AreaService } from '../../../service/areas.js';
import type { Clock } from '../../../service/clock.js';
import type { ObjectService } from '../../../service/objects.js';
import type { PubSub } from '../../../service/pubsub.js';
import type { RealmService } from '../../../service/realms.js';
import type { Subscriptions } from '../../../service/subscriptions.js';
import type { LiveSubscriptions } from '../../../service/live/live-subscriptions.js';
import type { BuildInfo } from '../../../build-info.js';

export interface HandlerDeps {
  access: Access;
  objects: ObjectService;
  areas: AreaService;
  realms: RealmService;
  /** The `evt` model's subscriptions (locus extension `sub`/`sub`, `sub`/`uns`). */
  subscriptions: Subscriptions;
  /** Realm pub/sub (`rea` `sub`/`uns`/`pub`). */
  pubsub: PubSub;
  /** Hivekit subscriptions (`sub` `cre`/`upd`/`del`, compat section 5). */
  live: LiveSubscriptions;
  clock: Clock;
  build: BuildInfo;
}
