/**
 * What the v1 handlers are built from. Each handlers/*.ts module takes the parts it needs;
 * server.ts builds one of these and hands it to handlers/index.ts.
 */
import type { Access } from '../../../service/access.js';
import type { AreaService } from '../../../service/areas.js';
import type { InstructionService } from '../../../service/instructions.js';
import type { Clock } from '../../../service/clock.js';
import type { ObjectService } from '../../../service/objects.js';
import type { PubSub } from '../../../service/pubsub.js';
import type { PresenceLookup } from '../../../service/presence-port.js';
import type { RealmSearch } from '../../../service/realm-search.js';
import type { RealmService } from '../../../service/realms.js';
import type { Subscriptions } from '../../../service/subscriptions.js';
import type { LiveSubscriptions } from '../../../service/live/live-subscriptions.js';
import type { BuildInfo } from '../../../build-info.js';

/** Limits the v1 handlers apply (from the configuration). */
export interface V1Limits {
  /** LOCUS_MAX_PAGE: a v1 list returns at most this many entries (then `nxt`). */
  maxPage: number;
  /** LOCUS_MAX_FILTER_CONDITIONS. */
  maxFilterConditions: number;
  /** LOCUS_MAX_POLYGON_VERTICES. */
  maxVertices: number;
}

export interface HandlerDeps {
  access: Access;
  objects: ObjectService;
  areas: AreaService;
  /** HiveScript instructions (`ins`, compat 4.9). */
  instructions: InstructionService;
  realms: RealmService;
  /** Hivekit's search over objects and areas (`rea sea`): `new RealmSearch(store)`. */
  search: RealmSearch;
  /** The `evt` model's subscriptions (locus extension `sub`/`sub`, `sub`/`uns`). */
  subscriptions: Subscriptions;
  /** Realm pub/sub (`rea` `sub`/`uns`/`pub`). */
  pubsub: PubSub;
  /** Hivekit subscriptions (`sub` `cre`/`upd`/`del`, compat section 5). */
  live: LiveSubscriptions;
  /** Who is connected (compat 6): the `cst` of object records and list entries. Default noPresence. */
  presence: PresenceLookup;
  limits: V1Limits;
  clock: Clock;
  build: BuildInfo;
}
