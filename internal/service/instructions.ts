/**
 * Instruction use cases (hivekit-rest.md 6, hivekit-compat.md 4.9): create, update, read,
 * list, delete a realm's HiveScript instructions, with the source checked by the language
 * before anything is stored, and every change announced on the bus (InstructionChangedEvent),
 * which the engine and `ins` subscribers of every process hear.
 *
 * Rules: a missing or unparsable source is refused with `Error: Incorrect Syntax. …`; the
 * source is at most `maxSourceChars` long and a realm holds at most `maxPerRealm`
 * instructions (413 beyond, checked before the write). An update merges `data` (null removes a
 * key); a source other than the stored one restarts the instruction (the store bumps its
 * generation), and so does the same source sent to a suspended instruction, which is how a
 * user resumes it. Rights are the transports' (auth/instruction-rights.ts).
 */
import { parseInstructionChanges, parseInstructionCreate } from '../domain/instruction-input.js';
import type { InstructionPatch, InstructionRecord } from '../domain/instruction.js';
import type { InstructionChangedEvent } from '../domain/events.js';
import { parseIdAt } from '../domain/ids.js';
import type { Realm } from '../domain/types.js';
import { instructionExists, tooLarge, unknownInstruction } from '../errors.js';
import type { EventBus } from '../events/port.js';
import type { InstructionStore } from '../store/port.js';
import { isoTime, type Clock } from './clock.js';

export interface InstructionLimits {
  /** LOCUS_INSTRUCTION_MAX_SOURCE_CHARS: longest source, in UTF-16 code units. */
  maxSourceChars: number;
  /** LOCUS_INSTRUCTION_MAX_PER_REALM. */
  maxPerRealm: number;
}

/**
 * The language's check of a source (instructions/language/compile.ts compileInstruction):
 * throws a LocusError `invalid_instruction` whose message begins `Error: Incorrect Syntax.`.
 */
export type InstructionCompiler = (source: string) => unknown;

export function parseInstructionId(value: unknown): string {
  return parseIdAt(value, 'instruction id');
}

/** The part of the store the service uses (the engine's state is the runtime's). */
export type InstructionRecords = Pick<InstructionStore, 'create' | 'get' | 'list' | 'count' | 'update' | 'delete'>;

export class InstructionService {
  constructor(
    private readonly store: InstructionRecords,
    private readonly compile: InstructionCompiler,
    private readonly bus: Pick<EventBus, 'publish'>,
    private readonly clock: Clock,
    private readonly limits: InstructionLimits,
  ) {}

  /** 409 `instruction with id <id> already exists` for an existing id; it starts at once. */
  async create(realm: Realm, id: string, body: unknown): Promise<InstructionRecord> {
    const instructionId = parseInstructionId(id);
    const input = parseInstructionCreate(instructionId, body, this.limits.maxSourceChars);
    this.compile(input.source);
    // A create that would only fail as a duplicate says so rather than "the realm is full".
    if ((await this.store.get(realm.id, instructionId)) !== null) throw instructionExists(instructionId);
    const count = await this.store.count(realm.id);
    if (count >= this.limits.maxPerRealm) {
      throw tooLarge(`realm ${realm.name} holds ${count} instructions; at most ${this.limits.maxPerRealm} are allowed (LOCUS_INSTRUCTION_MAX_PER_REALM): delete some first`);
    }
    const now = isoTime(this.clock());
    const record: InstructionRecord = {
      id: instructionId,
      label: input.label,
      source: input.source,
      data: input.data,
      created: now,
      updated: now,
      generation: 1,
      suspended: null,
    };
    await this.store.create(realm.id, record);
    this.announce(realm, instructionId, 'cre');
    return record;
  }

  /** 404 `unknown instruction <id>` when missing. */
  async update(realm: Realm, id: string, body: unknown): Promise<InstructionRecord> {
    const instructionId = parseInstructionId(id);
    const changes = parseInstructionChanges(instructionId, body, this.limits.maxSourceChars);
    if (changes.source !== undefined) this.compile(changes.source);
    const current = await this.store.get(realm.id, instructionId);
    if (current === null) throw unknownInstruction(instructionId);
    const patch: InstructionPatch = {};
    if (changes.label !== undefined) patch.label = changes.label;
    if (changes.data !== undefined) patch.data = changes.data;
    // The client resends the source with every update: only a change (or a suspended
    // instruction, which this resumes) restarts it and drops its membership.
    if (changes.source !== undefined && (changes.source !== current.source || current.suspended !== null)) patch.source = changes.source;
    const updated = await this.store.update(realm.id, instructionId, patch, isoTime(this.clock()));
    if (updated === null) throw unknownInstruction(instructionId);
    this.announce(realm, instructionId, 'upd');
    return updated;
  }

  async get(realm: Realm, id: string): Promise<InstructionRecord> {
    const instructionId = parseInstructionId(id);
    const record = await this.store.get(realm.id, instructionId);
    if (record === null) throw unknownInstruction(instructionId);
    return record;
  }

  /** Every instruction of the realm, in creation order (a realm holds at most maxPerRealm). */
  list(realm: Realm): Promise<InstructionRecord[]> {
    return this.store.list(realm.id);
  }

  /** 404 `unknown instruction <id>` when missing. */
  async delete(realm: Realm, id: string): Promise<void> {
    const instructionId = parseInstructionId(id);
    if (!(await this.store.delete(realm.id, instructionId))) throw unknownInstruction(instructionId);
    this.announce(realm, instructionId, 'del');
  }

  private announce(realm: Realm, id: string, act: InstructionChangedEvent['act']): void {
    const event: InstructionChangedEvent = { kind: 'ins', realm: realm.id, id, act };
    this.bus.publish(realm.id, [event]);
  }
}
