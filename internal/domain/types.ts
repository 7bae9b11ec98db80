/** Pure domain types shared by every layer. No I/O here. */

/**
 * A data property value: any JSON value, nested objects and arrays included (domain/data.ts
 * bounds their depth and size).
 */
export type DataValue = JsonValue;

/** A value a filter condition compares with: never an object or an array. */
export type ScalarValue = number | string | boolean | null;

/**
 * Stored data: never holds null at the top level (a null in an update removes the key);
 * nested nulls are values like any other.
 */
export type Data = Record<string, Exclude<JsonValue, null>>;

/** Data as given in an update: null removes a key. */
export type DataPatch = Record<string, DataValue>;

/**
 * A location fix. `time` is always set once stored: normalised to
 * `YYYY-MM-DDTHH:mm:ss.sssZ` (so string order is time order); a fix sent without
 * one is stamped with the server's receive time.
 */
export interface Location {
  longitude: number;
  latitude: number;
  altitude?: number;
  speed?: number;
  heading?: number;
  accuracy?: number;
  altitudeAccuracy?: number;
  time: string;
}

export interface TrackedObject {
  id: string;
  label: string | null;
  location: Location | null;
  data: Data;
  /** Server receive time (normalised ISO) of the last write that carried a location (connectionStatus no longer depends on it: presence does). */
  seen: string | null;
  /**
   * Hivekit task ids (v1 `tds`, hivekit-compat.md 4.2), in the order given. Absent when the
   * object has none (never an empty array), so that an object without tasks, a tracker's,
   * carries nothing more.
   */
  tasks?: string[];
}

/** One validated create-or-update of an object (single write, bulk entry or v1 `upd`). */
export interface ObjectPatch {
  id: string;
  /** undefined: keep; null: clear. */
  label?: string | null;
  /** A fix, already stamped with a time. */
  location?: Location;
  data?: DataPatch;
  /** Task ids (validated: object-input.ts parseTasks): replace the object's; [] clears them; undefined keeps them. */
  tasks?: string[];
  /**
   * Update only (v1 `obj upd`): when the object does not exist the store skips the patch (no
   * change for its id; the caller answers 404 `unknown object <id>`), checked inside the
   * write (no read before it).
   */
  mustExist?: true;
}

/**
 * All patches of one id in one batch, folded in array order: the last given label and
 * task ids, data merged key by key, every fix (for history) and the newest fix (for the current
 * location; equal times: the later entry wins).
 */
export interface FoldedPatch {
  id: string;
  label?: string | null;
  data?: DataPatch;
  tasks?: string[];
  fixes: Location[];
  latest: Location | null;
  /** Some patch of the id had mustExist. */
  mustExist?: true;
}

/** What one write did to one object: feeds geofences, events and metrics. */
export interface ObjectChange {
  realm: string;
  id: string;
  old: TrackedObject | null;
  new: TrackedObject | null;
  /** Fixes written to history by this write. */
  history: Location[];
  time: string;
  /** Who made the write; absent: a client. */
  origin?: ChangeOrigin;
}

/**
 * Who made a write: absent for clients; an instruction's action carries the instruction and the
 * depth of the chain of instructions that led to it (a client's write triggers depth 1).
 */
export interface ChangeOrigin {
  instruction: string;
  depth: number;
}

export interface CircleShape {
  cx: number;
  cy: number;
  r: number;
}
export interface RectangleShape {
  w: number;
  n: number;
  e: number;
  s: number;
}
export interface PolygonShape {
  points: [number, number][];
}
export type Shape = CircleShape | RectangleShape | PolygonShape;
export type ShapeType = 'circle' | 'rectangle' | 'polygon';

export interface Area {
  id: string;
  label: string | null;
  shape: Shape;
  data: Data;
}

export interface AreaCreate {
  id: string;
  label: string | null;
  shape: Shape;
  data: Data;
}

export interface AreaPatch {
  label?: string | null;
  shape?: Shape;
  data?: DataPatch;
}

export interface AreaChange {
  realm: string;
  id: string;
  old: Area | null;
  new: Area | null;
  /** Who made the write; absent: a client. */
  origin?: ChangeOrigin;
}

export type Scope = 'read' | 'write' | 'admin';

export interface RealmSettings {
  /**
   * No longer used: connectionStatus comes from presence (compat 6). Still accepted and stored
   * (admin API, CLI) so that existing scripts keep working.
   */
  connectionTimeout: number;
  /** Days of history kept; 0 keeps everything. */
  historyRetentionDays: number;
  /** Requests per second per token; null uses the server default. */
  rateLimit: number | null;
  /**
   * Data fields whose list filters are served by an index (domain/realm-settings.ts;
   * docs/api.md "Filter indexes"). Absent when none are declared.
   */
  filterIndexes?: string[];
}

/** Any JSON value. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/**
 * A realm's data: nested like object data, bounded as JSON text (realm-entity.ts). Stored
 * data holds no null at the top level: a null in an update removes the key (nested nulls
 * are values like any other).
 */
export type RealmData = Record<string, JsonValue>;

export interface Realm {
  /**
   * The storage key every store call uses (domain/realm-key.ts): the name for the default
   * tenant, tenant and name joined for any other. Never shown on the wire.
   */
  id: string;
  /** The tenant that owns the realm. */
  tenant: string;
  /** The id the tenant knows, unique within the tenant: what replies show. */
  name: string;
  /** Null for a realm made without one (the admin API's PUT, the CLI, realms older than labels). */
  label: string | null;
  data: RealmData;
  settings: RealmSettings;
  created: string;
}

/** A realm update's label and data. undefined: keep; a null label clears it; data merges at the top level. */
export interface RealmPatch {
  label?: string | null;
  data?: RealmData;
}

/** A tenant: owns realms and signing keys (decisions.md "Tenants"). */
export interface TenantRecord {
  /** 1–64 characters, `[a-z0-9-]` (domain/tenant.ts). */
  id: string;
  label: string | null;
  created: string;
}

/**
 * A tenant's JWT signing key (HS256). The secret itself is stored, since HMAC verification
 * needs it: the store must be protected like the tokens it replaces. Never logged, never listed.
 */
export interface SigningKeyRecord {
  /** The JWT header's `kid`: `key_<hex>`. */
  id: string;
  tenant: string;
  /** The one realm (its name) the key's tokens are confined to; null: any realm of the tenant. */
  realm: string | null;
  /** 256 random bits, base64url. */
  secret: string;
  created: string;
}

export interface TokenRecord {
  id: string;
  realm: string;
  /** Hex SHA-256 of the secret; the secret itself is never stored. */
  hash: string;
  scope: Scope;
  created: string;
}

export type ConnectionStatus = 'con' | 'dis';

export type FilterOp = '=' | '!=' | '>' | '<' | '>=' | '<=';

/**
 * One condition of a list filter. `field` names a data property, or the object's
 * own `id` or `label` (a null label counts as null).
 */
export interface FilterCondition {
  field: string;
  op: FilterOp;
  value: ScalarValue;
  /**
   * `data`: `field` is a data property even when it is named `id` or `label` (Hivekit's `atr`
   * conditions, where the pseudo-fields are `$id` and `$label`). Absent: the REST rule.
   */
  target?: 'data';
}

/** A longitude/latitude box, minLon <= maxLon (boxes never wrap; a wrapping shape gets two). */
export interface BBox {
  minLon: number;
  minLat: number;
  maxLon: number;
  maxLat: number;
}
