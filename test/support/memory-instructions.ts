/**
 * Instruction records in memory, for the unit tests of InstructionService only (the real
 * adapters are SQLite and MongoDB, tested by the store contract). Follows the port's rules:
 * 409 on an existing id, creation order, data merged with null removing a key, a new source
 * bumping the generation and clearing the suspension.
 */
import type { InstructionPatch, InstructionRecord } from '../../internal/domain/instruction.js';
import { instructionExists } from '../../internal/errors.js';
import type { InstructionRecords } from '../../internal/service/instructions.js';

export class MemoryInstructions implements InstructionRecords {
  private readonly realms = new Map<string, Map<string, InstructionRecord>>();

  private realm(realm: string): Map<string, InstructionRecord> {
    let map = this.realms.get(realm);
    if (map === undefined) {
      map = new Map();
      this.realms.set(realm, map);
    }
    return map;
  }

  create(realm: string, record: InstructionRecord): Promise<void> {
    const map = this.realm(realm);
    if (map.has(record.id)) return Promise.reject(instructionExists(record.id));
    map.set(record.id, structuredClone(record));
    return Promise.resolve();
  }

  get(realm: string, id: string): Promise<InstructionRecord | null> {
    const record = this.realm(realm).get(id);
    return Promise.resolve(record === undefined ? null : structuredClone(record));
  }

  list(realm: string): Promise<InstructionRecord[]> {
    return Promise.resolve([...this.realm(realm).values()].map((record) => structuredClone(record)));
  }

  count(realm: string): Promise<number> {
    return Promise.resolve(this.realm(realm).size);
  }

  update(realm: string, id: string, patch: InstructionPatch, now: string): Promise<InstructionRecord | null> {
    const old = this.realm(realm).get(id);
    if (old === undefined) return Promise.resolve(null);
    const next: InstructionRecord = { ...structuredClone(old), updated: now };
    if (patch.label !== undefined) next.label = patch.label;
    if (patch.data !== undefined) {
      for (const [key, value] of Object.entries(patch.data)) {
        if (value === null) delete next.data[key];
        else next.data[key] = value;
      }
    }
    if (patch.source !== undefined) {
      next.source = patch.source;
      next.generation = old.generation + 1;
      next.suspended = null;
    }
    if (patch.suspended !== undefined) next.suspended = patch.suspended;
    this.realm(realm).set(id, next);
    return Promise.resolve(structuredClone(next));
  }

  delete(realm: string, id: string): Promise<boolean> {
    return Promise.resolve(this.realm(realm).delete(id));
  }
}
