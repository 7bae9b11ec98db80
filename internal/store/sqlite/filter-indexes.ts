/**
 * Filter indexes: for each data field a realm declares in its settings (`filterIndexes`,
 * domain/realm-settings.ts), an index on the field's value, so that a selective condition
 * on it reads its matches instead of scanning the realm in id order (object-reads.ts
 * picks the plan).
 *
 * Each is a partial expression index over the realm's rows only (other realms' writes do
 * not maintain it): `(realm, <value>, id) WHERE realm = '<realm>'`, covering, so that the
 * matches of a condition come out of the index with their ids and only the page's rows
 * are read. `<value>` (indexedValue) is the field's number as REAL or its string as TEXT,
 * NULL for anything else (missing, null, true/false, nested): the two types the ordered
 * conditions compare. SQLite sorts every REAL before every TEXT, so a condition's range
 * in the index (indexTerm) is bounded to its own type, giving exactly the rows
 * filter-sql.ts's term for the condition accepts (domain/filter.ts's semantics).
 *
 * The realm's settings are the source of truth: the realm store creates and drops the
 * indexes in the transaction that stores the settings (syncIndexes), so both commit
 * together. Readers learn of them from the schema (FilterIndexes), also when another
 * process changed it.
 */
import { createHash } from 'node:crypto';
import type { Database, Statement } from 'better-sqlite3';
import type { FilterCondition } from '../../domain/types.js';
import { dataPath } from './filter-sql.js';

const NAME_PREFIX = 'objects_filter_';

/** An SQL string literal. */
function sqlString(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}

/** The index of one realm's field: a name made of both, the same in every process. */
export function filterIndexName(realm: string, field: string): string {
  return NAME_PREFIX + createHash('sha256').update(realm).update('\0').update(field).digest('hex').slice(0, 32);
}

/**
 * The indexed value of data field `field` of the row aliased `alias` (empty: the table's
 * own columns, as CREATE INDEX needs). The path is a literal: SQLite uses an expression
 * index only for a query that repeats its expression. Numbers become REAL by adding 0.0
 * (the value CAST AS REAL gives, as filter-sql.ts compares), without CAST, which would
 * give the expression REAL affinity and make SQLite convert a TEXT operand to a number.
 */
export function indexedValue(field: string, alias: string): string {
  const data = alias === '' ? 'data' : `${alias}.data`;
  const path = sqlString(dataPath(field));
  const extract = `json_extract(${data}, ${path})`;
  return `(CASE json_type(${data}, ${path}) WHEN 'integer' THEN ${extract} + 0.0 WHEN 'real' THEN ${extract} + 0.0 WHEN 'text' THEN ${extract} END)`;
}

/** The data field a condition tests, when a filter index can serve it; else null. */
export function indexableField(condition: FilterCondition): string | null {
  const { field, op, value, target } = condition;
  if (target === undefined && (field === 'id' || field === 'label')) return null;
  if (op === '!=') return null;
  return typeof value === 'number' || typeof value === 'string' ? field : null;
}

/**
 * The condition as a range of indexedValue (alias `o`), exactly the rows filter-sql.ts's
 * term for it accepts. Every REAL sorts before every TEXT, and '' is the least TEXT: a
 * number's range stops below '', a string's starts at it.
 */
export function indexTerm(condition: FilterCondition, params: (string | number)[]): string {
  const value = indexedValue(condition.field, 'o');
  const { op } = condition;
  params.push(condition.value as string | number);
  if (op === '=') return `${value} = ?`;
  const lowerBound = op === '>' || op === '>=';
  if (typeof condition.value === 'number') return lowerBound ? `${value} ${op} ? AND ${value} < ''` : `${value} ${op} ?`;
  return lowerBound ? `${value} ${op} ?` : `${value} ${op} ? AND ${value} >= ''`;
}

/**
 * Makes the realm's filter indexes those of `fields`: creates the missing ones (this reads
 * the realm's rows: it takes as long as a scan of them, and writes wait meanwhile) and
 * drops the others. Run in the transaction that stores the settings.
 */
export function syncIndexes(db: Database, realm: string, fields: readonly string[]): void {
  const wanted = new Map(fields.map((field) => [filterIndexName(realm, field), field]));
  for (const name of realmIndexNames(db, realm)) {
    if (!wanted.has(name)) db.exec(`DROP INDEX IF EXISTS "${name}"`);
  }
  for (const [name, field] of wanted) {
    db.exec(`CREATE INDEX IF NOT EXISTS "${name}" ON objects (realm, ${indexedValue(field, '')}, id) WHERE realm = ${sqlString(realm)}`);
  }
}

/** Drops the realm's filter indexes (the realm is deleted). */
export function dropIndexes(db: Database, realm: string): void {
  syncIndexes(db, realm, []);
}

/** The names of the filter indexes over the realm's rows (their WHERE names the realm). */
function realmIndexNames(db: Database, realm: string): string[] {
  const rows = db
    .prepare<[number, string], { name: string; sql: string }>("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'objects' AND substr(name, 1, ?) = ?")
    .all(NAME_PREFIX.length, NAME_PREFIX);
  const where = ` WHERE realm = ${sqlString(realm)}`;
  return rows.filter((row) => row.sql.endsWith(where)).map((row) => row.name);
}

/** A realm's filter indexes: field → index name. */
export type RealmFilterIndexes = ReadonlyMap<string, string>;

/**
 * The filter indexes present, per realm, read from the realms' settings and the schema,
 * and read again whenever the schema changed (a realm's settings were stored here or by
 * another process sharing the file).
 */
export class FilterIndexes {
  private readonly schemaVersion: Statement<[], number>;
  private readonly selectSettings: Statement<[], { id: string; settings: string }>;
  private readonly selectNames: Statement<[number, string], string>;
  private version = -1;
  private byRealm = new Map<string, RealmFilterIndexes>();

  constructor(db: Database) {
    this.schemaVersion = db.prepare<[], number>('PRAGMA schema_version').pluck();
    this.selectSettings = db.prepare<[], { id: string; settings: string }>("SELECT id, settings FROM realms WHERE settings LIKE '%\"filterIndexes\"%'");
    this.selectNames = db.prepare<[number, string], string>("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'objects' AND substr(name, 1, ?) = ?").pluck();
  }

  /** The realm's filter indexes (empty when it declares none). */
  of(realm: string): RealmFilterIndexes | undefined {
    const version = this.schemaVersion.get() ?? 0;
    if (version !== this.version) {
      this.byRealm = this.read();
      this.version = version;
    }
    return this.byRealm.get(realm);
  }

  private read(): Map<string, RealmFilterIndexes> {
    const present = new Set(this.selectNames.all(NAME_PREFIX.length, NAME_PREFIX));
    const out = new Map<string, RealmFilterIndexes>();
    for (const { id, settings } of this.selectSettings.all()) {
      const fields = (JSON.parse(settings) as { filterIndexes?: unknown }).filterIndexes;
      if (!Array.isArray(fields)) continue;
      const indexes = new Map<string, string>();
      for (const field of fields) {
        if (typeof field !== 'string') continue;
        const name = filterIndexName(id, field);
        if (present.has(name)) indexes.set(field, name);
      }
      if (indexes.size > 0) out.set(id, indexes);
    }
    return out;
  }
}
