/**
 * Instructions, the engine's state for them and store leases in MongoDB.
 *
 * A realm's database holds `instructions` (one document per instruction), `instruction_members`
 * (one per entry of an instruction's `when` set) and `instruction_pending` (the outbox, keyed by
 * the action key). The control database holds `leases` and `instruction_realms`, which names the
 * realms that were given an instruction (realmsWithInstructions checks each, so a realm whose
 * instructions were all deleted drops out).
 *
 * No transactions: the store runs on a standalone server too (as the rest of this adapter
 * does). So what must change together is tied to one document. Each instruction document
 * carries an incarnation (an ObjectId, new at create and at every new source), and members and
 * pending actions belong to an incarnation, not to an instruction id: replacing or deleting the
 * instruction document, one atomic write, voids all of its state at once; removing the void
 * rows afterwards is cleanup, and a crash before it leaves rows nobody reads.
 *
 * applyMembership writes the pending actions first, then the membership. A process that dies
 * in between leaves actions whose membership change is missing: the next owner carries them
 * out, and its level-based repair (re-evaluation against the stored membership) then sees the
 * same entries join or leave again and fires for them once more. So on this adapter, in that
 * window only, `then` and `until` are at least once, never lost; actions are idempotent by key
 * (writing one again keeps one), and sendToUrl carries that key to its receiver.
 */
import { ObjectId, type AnyBulkWriteOperation, type Collection, type Db } from 'mongodb';
import type { InstructionPatch, InstructionRecord, Lease, MembershipChange, PendingAction } from '../../domain/instruction.js';
import { applyInstructionPatch, leaseExpiry } from '../../domain/instruction-update.js';
import type { Data } from '../../domain/types.js';
import { instructionExists, LocusError } from '../../errors.js';
import type { InstructionStore, LeaseStore } from '../port.js';
import { ensureInstructionIndexes } from './indexes.js';
import { DUPLICATE_KEY, guarded, insertNew, isDuplicateKey } from './mongo-errors.js';
import type { RealmDatabases } from './realm-databases.js';

/** Attempts of an optimistic update before it gives up (`unavailable`: try again). */
const UPDATE_ATTEMPTS = 20;

export interface InstructionDoc {
  _id: string;
  label: string | null;
  source: string;
  /** Data as JSON text (key order and keys such as `__proto__` kept). */
  data: string;
  created: string;
  updated: string;
  generation: number;
  suspended: string | null;
  /** New at create and at every new source: the state below belongs to it. */
  incarnation: ObjectId;
  /** Creation order: drawn from the realm's `sequences` counter. */
  order: number;
  /** Bumped by each update (optimistic concurrency). */
  v: number;
}

/** One entry of an incarnation's `when` set; (incarnation, entry) is unique. */
export interface MemberDoc {
  incarnation: ObjectId;
  entry: string;
}

export interface PendingDoc {
  /** The action key. */
  _id: string;
  instruction: string;
  generation: number;
  incarnation: ObjectId;
  part: 'then' | 'until';
  entries: string[];
  created: string;
  attempts: number;
  /** The depth its writes carry (PendingAction.depth); absent: 1. */
  depth?: number;
  /** Write order (the writing process's ObjectIds increase; only the realm's lease holder writes actions). */
  order: ObjectId;
}

export interface LeaseDoc {
  _id: string;
  holder: string;
  expires: Date;
}

/** A counter of the realm's database (`_id`: what it numbers). */
interface SequenceDoc {
  _id: string;
  n: number;
}

/**
 * The next number of a realm's counter. The first use of a counter creates it by an upsert:
 * of two first uses at once, one may fail on the unique `_id` (as what, differs between
 * servers), and its second attempt finds the counter.
 */
async function nextInSequence(db: Db, name: string): Promise<number> {
  const sequences = db.collection<SequenceDoc>('sequences');
  const next = (): Promise<SequenceDoc | null> => sequences.findOneAndUpdate({ _id: name }, { $inc: { n: 1 } }, { upsert: true, returnDocument: 'after' });
  const doc = await next().catch(next);
  if (doc === null) throw new LocusError('internal', `the ${name} counter did not answer`);
  return doc.n;
}

export interface InstructionRealmDoc {
  _id: string;
}

function instructionFromDoc(doc: InstructionDoc): InstructionRecord {
  return {
    id: doc._id,
    label: doc.label,
    source: doc.source,
    data: JSON.parse(doc.data) as Data,
    created: doc.created,
    updated: doc.updated,
    generation: doc.generation,
    suspended: doc.suspended,
  };
}

function pendingFromDoc(doc: PendingDoc): PendingAction {
  const action: PendingAction = { key: doc._id, instruction: doc.instruction, generation: doc.generation, part: doc.part, entries: doc.entries, created: doc.created, attempts: doc.attempts };
  if (doc.depth !== undefined && doc.depth !== null) action.depth = doc.depth;
  return action;
}

function instructionToDoc(record: InstructionRecord, incarnation: ObjectId, order: number, v: number): InstructionDoc {
  return {
    _id: record.id,
    label: record.label,
    source: record.source,
    data: JSON.stringify(record.data),
    created: record.created,
    updated: record.updated,
    generation: record.generation,
    suspended: record.suspended,
    incarnation,
    order,
    v,
  };
}

const LIVE_PROJECTION = { projection: { _id: 1, generation: 1, incarnation: 1 } } as const;

export class MongoInstructionStore implements InstructionStore {
  constructor(
    private readonly databases: RealmDatabases,
    private readonly realmsIndex: Collection<InstructionRealmDoc>,
  ) {}

  private instructions(db: Db): Collection<InstructionDoc> {
    return db.collection<InstructionDoc>('instructions');
  }

  private memberships(db: Db): Collection<MemberDoc> {
    return db.collection<MemberDoc>('instruction_members');
  }

  private outbox(db: Db): Collection<PendingDoc> {
    return db.collection<PendingDoc>('instruction_pending');
  }

  /** Removes the state of an incarnation that no instruction document names any more. */
  private async dropIncarnation(db: Db, incarnation: ObjectId): Promise<void> {
    await this.outbox(db).deleteMany({ incarnation });
    await this.memberships(db).deleteMany({ incarnation });
  }

  create(realm: string, record: InstructionRecord): Promise<void> {
    return guarded(async () => {
      const db = await this.databases.forWrite(realm);
      // Idempotent, and instructions are created seldom: made each time, so a realm deleted and put again gets them too.
      await ensureInstructionIndexes(db);
      // Named before the instruction exists: a crash in between leaves a name that is checked, never a realm missed.
      await this.realmsIndex.updateOne({ _id: realm }, { $setOnInsert: { _id: realm } }, { upsert: true });
      const order = await nextInSequence(db, 'instructions');
      await insertNew(this.instructions(db), instructionToDoc(record, new ObjectId(), order, 0), (err) => instructionExists(record.id, err));
    });
  }

  get(realm: string, id: string): Promise<InstructionRecord | null> {
    return guarded(async () => {
      const doc = await this.instructions(this.databases.db(realm)).findOne({ _id: id });
      return doc === null ? null : instructionFromDoc(doc);
    });
  }

  list(realm: string): Promise<InstructionRecord[]> {
    return guarded(async () => (await this.instructions(this.databases.db(realm)).find({}, { sort: { order: 1 } }).toArray()).map(instructionFromDoc));
  }

  count(realm: string): Promise<number> {
    return guarded(() => this.instructions(this.databases.db(realm)).countDocuments({}));
  }

  update(realm: string, id: string, patch: InstructionPatch, now: string): Promise<InstructionRecord | null> {
    return guarded(async () => {
      const db = this.databases.db(realm);
      const instructions = this.instructions(db);
      for (let attempt = 0; attempt < UPDATE_ATTEMPTS; attempt++) {
        const doc = await instructions.findOne({ _id: id });
        if (doc === null) return null;
        const { record, restarted } = applyInstructionPatch(instructionFromDoc(doc), patch, now);
        const incarnation = restarted ? new ObjectId() : doc.incarnation;
        const result = await instructions.replaceOne({ _id: id, v: doc.v }, instructionToDoc(record, incarnation, doc.order, doc.v + 1));
        if (result.matchedCount === 1) {
          if (restarted) await this.dropIncarnation(db, doc.incarnation);
          return record;
        }
      }
      throw new LocusError('unavailable', `instruction ${id} is being changed by others: try again`);
    });
  }

  delete(realm: string, id: string): Promise<boolean> {
    return guarded(async () => {
      const db = this.databases.db(realm);
      const doc = await this.instructions(db).findOneAndDelete({ _id: id });
      if (doc === null) return false;
      await this.dropIncarnation(db, doc.incarnation);
      return true;
    });
  }

  realmsWithInstructions(): Promise<string[]> {
    return guarded(async () => {
      const named = await this.realmsIndex.find({}, { sort: { _id: 1 } }).toArray();
      const holding: string[] = [];
      for (const { _id: realm } of named) {
        if ((await this.instructions(this.databases.db(realm)).findOne({}, { projection: { _id: 1 } })) !== null) holding.push(realm);
      }
      return holding;
    });
  }

  members(realm: string, id: string): Promise<string[]> {
    return guarded(async () => {
      const db = this.databases.db(realm);
      const doc = await this.instructions(db).findOne({ _id: id }, LIVE_PROJECTION);
      if (doc === null) return [];
      const members = await this.memberships(db).find({ incarnation: doc.incarnation }, { sort: { entry: 1 }, projection: { _id: 0, entry: 1 } }).toArray();
      return members.map((member) => member.entry);
    });
  }

  applyMembership(realm: string, changes: readonly MembershipChange[], actions: readonly PendingAction[]): Promise<void> {
    return guarded(async () => {
      if (changes.length === 0 && actions.length === 0) return;
      // Not forWrite: a realm without instructions (deleted meanwhile, say) gets no write, and one with them has its indexes (create).
      const db = this.databases.db(realm);
      const ids = [...new Set([...changes.map((c) => c.instruction), ...actions.map((a) => a.instruction)])];
      const live = new Map<string, { generation: number; incarnation: ObjectId }>();
      for (const doc of await this.instructions(db).find({ _id: { $in: ids } }, LIVE_PROJECTION).toArray()) live.set(doc._id, doc);
      const incarnationOf = (instruction: string, generation: number): ObjectId | null => {
        const current = live.get(instruction);
        return current !== undefined && current.generation === generation ? current.incarnation : null;
      };

      // The actions first (see the header): a crash before the membership is written repeats an action, never loses one.
      const pending: PendingDoc[] = [];
      for (const action of actions) {
        const incarnation = incarnationOf(action.instruction, action.generation);
        if (incarnation === null) continue;
        pending.push({ ...pendingToFields(action), incarnation, order: new ObjectId() });
      }
      if (pending.length > 0) {
        try {
          await this.outbox(db).insertMany(pending, { ordered: false });
        } catch (err) {
          // A key already pending is kept once; any other failure fails the batch.
          if (!onlyDuplicateKeys(err)) throw err;
        }
      }

      const operations: AnyBulkWriteOperation<MemberDoc>[] = [];
      for (const change of changes) {
        const incarnation = incarnationOf(change.instruction, change.generation);
        if (incarnation === null) continue;
        for (const entry of change.joined) {
          operations.push({ updateOne: { filter: { incarnation, entry }, update: { $setOnInsert: { incarnation, entry } }, upsert: true } });
        }
        for (const entry of change.left) operations.push({ deleteOne: { filter: { incarnation, entry } } });
      }
      if (operations.length > 0) await this.memberships(db).bulkWrite(operations, { ordered: true });
    });
  }

  pending(realm: string, limit: number): Promise<PendingAction[]> {
    return guarded(async () => {
      const db = this.databases.db(realm);
      // Actions of a void incarnation (a crash before their cleanup) are nobody's: not listed.
      const incarnations = (await this.instructions(db).find({}, LIVE_PROJECTION).toArray()).map((doc) => doc.incarnation);
      if (incarnations.length === 0) return [];
      const docs = await this.outbox(db)
        .find({ incarnation: { $in: incarnations } }, { sort: { order: 1 }, limit })
        .toArray();
      return docs.map(pendingFromDoc);
    });
  }

  completePending(realm: string, keys: readonly string[]): Promise<void> {
    return guarded(async () => {
      if (keys.length === 0) return;
      await this.outbox(this.databases.db(realm)).deleteMany({ _id: { $in: [...keys] } });
    });
  }

  recordAttempt(realm: string, key: string): Promise<void> {
    return guarded(async () => {
      await this.outbox(this.databases.db(realm)).updateOne({ _id: key }, { $inc: { attempts: 1 } });
    });
  }
}

function pendingToFields(action: PendingAction): Omit<PendingDoc, 'incarnation' | 'order'> {
  return {
    _id: action.key,
    instruction: action.instruction,
    generation: action.generation,
    part: action.part,
    entries: [...action.entries],
    created: action.created,
    attempts: action.attempts,
    ...(action.depth === undefined ? {} : { depth: action.depth }),
  };
}

/** True when every write error of an unordered insert is a duplicate key. */
function onlyDuplicateKeys(err: unknown): boolean {
  if (!isDuplicateKey(err)) return false;
  const writeErrors = (err as { writeErrors?: unknown }).writeErrors;
  if (!Array.isArray(writeErrors)) return true;
  return writeErrors.every((e: { code?: unknown }) => e.code === DUPLICATE_KEY);
}

/** Attempts of an acquire that finds the lease released between its steps. */
const ACQUIRE_ATTEMPTS = 5;

export class MongoLeaseStore implements LeaseStore {
  constructor(private readonly leases: Collection<LeaseDoc>) {}

  /**
   * A conditional update takes the lease when it is this holder's or expired; when it matches
   * nothing, an insert takes a lease that does not exist, and the unique `_id` refuses it when
   * someone else holds it (or took it first): the lease as it stands is read and returned.
   * Each step is one atomic write, so of concurrent acquirers one wins. (Not one upsert: an
   * upsert that loses the race on `_id` is not reported as a duplicate key by every server
   * that speaks the protocol.)
   */
  acquire(name: string, holder: string, ttlMs: number, now: string): Promise<Lease> {
    return guarded(async () => {
      const expires = new Date(leaseExpiry(now, ttlMs));
      const at = new Date(expires.getTime() - ttlMs);
      for (let attempt = 0; attempt < ACQUIRE_ATTEMPTS; attempt++) {
        const taken = await this.leases.updateOne({ _id: name, $or: [{ holder }, { expires: { $lte: at } }] }, { $set: { holder, expires } });
        if (taken.matchedCount === 1) return { name, holder, expires: expires.toISOString() };
        try {
          await this.leases.insertOne({ _id: name, holder, expires });
          return { name, holder, expires: expires.toISOString() };
        } catch (err) {
          if (!isDuplicateKey(err)) throw err;
        }
        // Held by someone else, unless released meanwhile: then again.
        const doc = await this.leases.findOne({ _id: name });
        if (doc !== null) return { name, holder: doc.holder, expires: doc.expires.toISOString() };
      }
      throw new LocusError('unavailable', `lease ${name} is being changed by others: try again`);
    });
  }

  release(name: string, holder: string): Promise<void> {
    return guarded(async () => {
      await this.leases.deleteOne({ _id: name, holder });
    });
  }
}
