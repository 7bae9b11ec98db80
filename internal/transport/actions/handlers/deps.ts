/**
 * What the v1 handlers are built from. Each handlers/*.ts module takes the parts it needs;
 * server.ts builds one of these and hands it to handlers/index.ts.
 */
import type { Access } from '../../../service/access.js';
import type { AreaService } from '../../../service/areas.js';
import type { Clock } from '../../../service/clock.js';
import type { ObjectService } from '../../../service/objects.js';
import type { RealmSearch } from '../../../service/realm-search.js';
import type { RealmService } from '../../../service/realms.js';
import type { Subscriptions } from '../../../service/subscriptions.js';
import type { BuildInfo } from '../../../build-info.js';

export interface HandlerDeps {
  access: Access;
  objects: ObjectService;
  areas: AreaService;
  realms: RealmService;
  /** Hivekit's search over objects and areas (`rea sea`): `new RealmSearch(store)`. */
  search: RealmSearch;
  /** The `evt` model's subscriptions (locus extension `sub`/`sub`, `sub`/`uns`). */
  subscriptions: Subscriptions;
  clock: Clock;
  build: BuildInfo;
}
