/**
 * Tasks in SQLite: the `tasks` table (schema.ts version 16), one row per task, listed in
 * creation order by its rowid. An update reads the row, applies domain applyTaskPatch and
 * writes the result in one IMMEDIATE transaction.
 */
import type Database from 'better-sqlite3';
import type { Statement, Transaction } from 'better-sqlite3';
import { applyTaskPatch } from '../../domain/task-input.js';
import type { TaskChange, TaskPatch, TaskRecord, TaskStatus, TaskStep } from '../../domain/task.js';
import type { Data, Location } from '../../domain/types.js';
import { taskExists } from '../../errors.js';
import type { TaskStore } from '../port.js';
import { isUniqueViolation, settle } from './sqlite-errors.js';

interface TaskRow {
  id: string;
  label: string | null;
  description: string | null;
  status: string;
  steps: string;
  target: string | null;
  location: string | null;
  data: string;
  created: string;
  updated: string;
}

type TaskValues = [string, string, string | null, string | null, string, string, string | null, string | null, string, string, string];

const COLUMNS = 'id, label, description, status, steps, target, location, data, created, updated';

function taskFromRow(row: TaskRow): TaskRecord {
  return {
    id: row.id,
    label: row.label,
    description: row.description,
    status: row.status as TaskStatus,
    steps: JSON.parse(row.steps) as TaskStep[],
    targetId: row.target,
    location: row.location === null ? null : (JSON.parse(row.location) as Location),
    data: JSON.parse(row.data) as Data,
    created: row.created,
    updated: row.updated,
  };
}

/** The row's values after `realm`, in the order of COLUMNS. */
function values(realm: string, task: TaskRecord): TaskValues {
  return [
    realm,
    task.id,
    task.label,
    task.description,
    task.status,
    JSON.stringify(task.steps),
    task.targetId,
    task.location === null ? null : JSON.stringify(task.location),
    JSON.stringify(task.data),
    task.created,
    task.updated,
  ];
}

export class SqliteTaskStore implements TaskStore {
  private readonly selectOne: Statement<[string, string], TaskRow>;
  private readonly selectAll: Statement<[string], TaskRow>;
  private readonly insert: Statement<TaskValues>;
  private readonly updateTx: Transaction<(realm: string, id: string, patch: TaskPatch, now: string) => TaskChange | null>;
  private readonly deleteTx: Transaction<(realm: string, id: string) => TaskChange | null>;

  constructor(db: Database.Database) {
    this.selectOne = db.prepare(`SELECT ${COLUMNS} FROM tasks WHERE realm = ? AND id = ?`);
    this.selectAll = db.prepare(`SELECT ${COLUMNS} FROM tasks WHERE realm = ? ORDER BY seq`);
    this.insert = db.prepare(`INSERT INTO tasks (realm, ${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
    const update = db.prepare<[string | null, string | null, string, string, string | null, string | null, string, string, string, string]>(
      'UPDATE tasks SET label = ?, description = ?, status = ?, steps = ?, target = ?, location = ?, data = ?, updated = ? WHERE realm = ? AND id = ?',
    );
    const deleteOne = db.prepare<[string, string]>('DELETE FROM tasks WHERE realm = ? AND id = ?');

    this.updateTx = db.transaction((realm: string, id: string, patch: TaskPatch, now: string) => {
      const row = this.selectOne.get(realm, id);
      if (row === undefined) return null;
      const old = taskFromRow(row);
      const next = applyTaskPatch(old, patch, now);
      const [, , label, description, status, steps, target, location, data, , updated] = values(realm, next);
      update.run(label, description, status, steps, target, location, data, updated, realm, id);
      const change: TaskChange = { realm, id, old, new: next };
      return change;
    });

    this.deleteTx = db.transaction((realm: string, id: string) => {
      const row = this.selectOne.get(realm, id);
      if (row === undefined) return null;
      deleteOne.run(realm, id);
      const change: TaskChange = { realm, id, old: taskFromRow(row), new: null };
      return change;
    });
  }

  create(realm: string, task: TaskRecord): Promise<TaskChange> {
    return settle(() => {
      try {
        this.insert.run(...values(realm, task));
      } catch (err) {
        if (isUniqueViolation(err)) throw taskExists(task.id, err);
        throw err;
      }
      const change: TaskChange = { realm, id: task.id, old: null, new: task };
      return change;
    });
  }

  update(realm: string, id: string, patch: TaskPatch, now: string): Promise<TaskChange | null> {
    return settle(() => this.updateTx.immediate(realm, id, patch, now));
  }

  get(realm: string, id: string): Promise<TaskRecord | null> {
    return settle(() => {
      const row = this.selectOne.get(realm, id);
      return row === undefined ? null : taskFromRow(row);
    });
  }

  list(realm: string): Promise<TaskRecord[]> {
    return settle(() => this.selectAll.all(realm).map(taskFromRow));
  }

  delete(realm: string, id: string): Promise<TaskChange | null> {
    return settle(() => this.deleteTx.immediate(realm, id));
  }
}
