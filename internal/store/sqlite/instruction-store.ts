/**
 * Instructions and the engine's state for them in SQLite (schema version 16). Leases: lease-file.ts.
 *
 * `instructions` keeps one row per instruction; its rowid (`seq`) is the creation order.
 * `instruction_members` holds the entries of each instruction's `when` set and
 * `instruction_pending` the actions decided and not yet carried out (the outbox, in rowid
 * order: oldest first). Only the current generation's rows exist: a new source deletes the
 * old ones in the transaction that bumps the generation, so reads need not check it.
 *
 * Every write is one IMMEDIATE transaction on the store's connection, as the realm and area
 * stores do (these writes are few; the group commit of object writes is for the location
 * load): a membership change and the actions it causes commit together or not at all.
 */
import type { Database, Statement, Transaction } from 'better-sqlite3';
import type { InstructionPatch, InstructionRecord, MembershipChange, PendingAction } from '../../domain/instruction.js';
import { applyInstructionPatch } from '../../domain/instruction-update.js';
import { instructionExists } from '../../errors.js';
import type { InstructionStore } from '../port.js';
import { isUniqueViolation, settle } from './sqlite-errors.js';

interface InstructionRow {
  id: string;
  label: string | null;
  source: string;
  data: string;
  created: string;
  updated: string;
  generation: number;
  suspended: string | null;
}

interface PendingRow {
  key: string;
  instruction: string;
  generation: number;
  part: string;
  entries: string;
  created: string;
  attempts: number;
  depth: number | null;
}

function instructionFromRow(row: InstructionRow): InstructionRecord {
  return { ...row, data: JSON.parse(row.data) as InstructionRecord['data'] };
}

function pendingFromRow(row: PendingRow): PendingAction {
  const { depth, ...rest } = row;
  const action: PendingAction = { ...rest, part: row.part === 'until' ? 'until' : 'then', entries: JSON.parse(row.entries) as string[] };
  if (depth !== null) action.depth = depth;
  return action;
}

const INSTRUCTION_COLUMNS = 'id, label, source, data, created, updated, generation, suspended';
const PENDING_COLUMNS = 'key, instruction, generation, part, entries, created, attempts, depth';

/** A realm's instructions with their members and pending actions, for the realm's delete. */
export const DELETE_REALM_INSTRUCTIONS_SQL = [
  'DELETE FROM instruction_pending WHERE realm = ?',
  'DELETE FROM instruction_members WHERE realm = ?',
  'DELETE FROM instructions WHERE realm = ?',
] as const;

export class SqliteInstructionStore implements InstructionStore {
  private readonly insert: Statement<[string, string, string | null, string, string, string, string, number, string | null]>;
  private readonly selectOne: Statement<[string, string], InstructionRow>;
  private readonly selectAll: Statement<[string], InstructionRow>;
  private readonly countAll: Statement<[string], number>;
  private readonly selectRealms: Statement<[], string>;
  private readonly selectMembers: Statement<[string, string], string>;
  private readonly selectPending: Statement<[string, number], PendingRow>;
  private readonly deletePending: Statement<[string, string]>;
  private readonly addAttempt: Statement<[string, string]>;
  private readonly updateTx: Transaction<(realm: string, id: string, patch: InstructionPatch, now: string) => InstructionRecord | null>;
  private readonly deleteTx: Transaction<(realm: string, id: string) => boolean>;
  private readonly applyTx: Transaction<(realm: string, changes: readonly MembershipChange[], actions: readonly PendingAction[]) => void>;
  private readonly completeTx: Transaction<(realm: string, keys: readonly string[]) => void>;

  constructor(db: Database) {
    this.insert = db.prepare(`INSERT INTO instructions (realm, ${INSTRUCTION_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`);
    this.selectOne = db.prepare(`SELECT ${INSTRUCTION_COLUMNS} FROM instructions WHERE realm = ? AND id = ?`);
    this.selectAll = db.prepare(`SELECT ${INSTRUCTION_COLUMNS} FROM instructions WHERE realm = ? ORDER BY seq`);
    this.countAll = db.prepare<[string], number>('SELECT count(*) FROM instructions WHERE realm = ?').pluck();
    this.selectRealms = db.prepare<[], string>('SELECT DISTINCT realm FROM instructions ORDER BY realm').pluck();
    this.selectMembers = db.prepare<[string, string], string>('SELECT entry FROM instruction_members WHERE realm = ? AND instruction = ? ORDER BY entry').pluck();
    this.selectPending = db.prepare(`SELECT ${PENDING_COLUMNS} FROM instruction_pending WHERE realm = ? ORDER BY seq LIMIT ?`);
    this.deletePending = db.prepare('DELETE FROM instruction_pending WHERE realm = ? AND key = ?');
    this.addAttempt = db.prepare('UPDATE instruction_pending SET attempts = attempts + 1 WHERE realm = ? AND key = ?');

    const update = db.prepare<[string | null, string, string, string, number, string | null, string, string]>(
      'UPDATE instructions SET label = ?, source = ?, data = ?, updated = ?, generation = ?, suspended = ? WHERE realm = ? AND id = ?',
    );
    const clearMembers = db.prepare<[string, string]>('DELETE FROM instruction_members WHERE realm = ? AND instruction = ?');
    const clearPending = db.prepare<[string, string]>('DELETE FROM instruction_pending WHERE realm = ? AND instruction = ?');
    const deleteOne = db.prepare<[string, string]>('DELETE FROM instructions WHERE realm = ? AND id = ?');
    const generationOf = db.prepare<[string, string], number>('SELECT generation FROM instructions WHERE realm = ? AND id = ?').pluck();
    const join = db.prepare<[string, string, string]>('INSERT OR IGNORE INTO instruction_members (realm, instruction, entry) VALUES (?, ?, ?)');
    const leave = db.prepare<[string, string, string]>('DELETE FROM instruction_members WHERE realm = ? AND instruction = ? AND entry = ?');
    // A key already pending is kept once: writing the same action again (a retried batch) is harmless.
    const addPending = db.prepare<[string, string, string, number, string, string, string, number, number | null]>(
      `INSERT OR IGNORE INTO instruction_pending (realm, ${PENDING_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );

    this.updateTx = db.transaction((realm: string, id: string, patch: InstructionPatch, now: string) => {
      const row = this.selectOne.get(realm, id);
      if (row === undefined) return null;
      const old = instructionFromRow(row);
      const { record, restarted } = applyInstructionPatch(old, patch, now);
      const data = record.data === old.data ? row.data : JSON.stringify(record.data);
      update.run(record.label, record.source, data, record.updated, record.generation, record.suspended, realm, id);
      if (restarted) {
        clearMembers.run(realm, id);
        clearPending.run(realm, id);
      }
      return record;
    });

    this.deleteTx = db.transaction((realm: string, id: string) => {
      clearMembers.run(realm, id);
      clearPending.run(realm, id);
      return deleteOne.run(realm, id).changes > 0;
    });

    this.applyTx = db.transaction((realm: string, changes: readonly MembershipChange[], actions: readonly PendingAction[]) => {
      const generations = new Map<string, number | undefined>();
      const current = (instruction: string, generation: number): boolean => {
        if (!generations.has(instruction)) generations.set(instruction, generationOf.get(realm, instruction));
        return generations.get(instruction) === generation;
      };
      for (const change of changes) {
        if (!current(change.instruction, change.generation)) continue;
        for (const entry of change.joined) join.run(realm, change.instruction, entry);
        for (const entry of change.left) leave.run(realm, change.instruction, entry);
      }
      for (const action of actions) {
        if (!current(action.instruction, action.generation)) continue;
        addPending.run(realm, action.key, action.instruction, action.generation, action.part, JSON.stringify(action.entries), action.created, action.attempts, action.depth ?? null);
      }
    });

    this.completeTx = db.transaction((realm: string, keys: readonly string[]) => {
      for (const key of keys) this.deletePending.run(realm, key);
    });
  }

  create(realm: string, record: InstructionRecord): Promise<void> {
    return settle(() => {
      try {
        this.insert.run(realm, record.id, record.label, record.source, JSON.stringify(record.data), record.created, record.updated, record.generation, record.suspended);
      } catch (err) {
        if (isUniqueViolation(err)) throw instructionExists(record.id, err);
        throw err;
      }
    });
  }

  get(realm: string, id: string): Promise<InstructionRecord | null> {
    return settle(() => {
      const row = this.selectOne.get(realm, id);
      return row === undefined ? null : instructionFromRow(row);
    });
  }

  list(realm: string): Promise<InstructionRecord[]> {
    return settle(() => this.selectAll.all(realm).map(instructionFromRow));
  }

  count(realm: string): Promise<number> {
    return settle(() => this.countAll.get(realm) ?? 0);
  }

  update(realm: string, id: string, patch: InstructionPatch, now: string): Promise<InstructionRecord | null> {
    return settle(() => this.updateTx.immediate(realm, id, patch, now));
  }

  delete(realm: string, id: string): Promise<boolean> {
    return settle(() => this.deleteTx.immediate(realm, id));
  }

  realmsWithInstructions(): Promise<string[]> {
    return settle(() => this.selectRealms.all());
  }

  members(realm: string, id: string): Promise<string[]> {
    return settle(() => this.selectMembers.all(realm, id));
  }

  applyMembership(realm: string, changes: readonly MembershipChange[], actions: readonly PendingAction[]): Promise<void> {
    return settle(() => this.applyTx.immediate(realm, changes, actions));
  }

  pending(realm: string, limit: number): Promise<PendingAction[]> {
    return settle(() => this.selectPending.all(realm, limit).map(pendingFromRow));
  }

  completePending(realm: string, keys: readonly string[]): Promise<void> {
    return settle(() => this.completeTx.immediate(realm, keys));
  }

  recordAttempt(realm: string, key: string): Promise<void> {
    return settle(() => {
      this.addAttempt.run(realm, key);
    });
  }
}
