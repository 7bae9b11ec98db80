/**
 * v1 `ins` actions (hivekit-compat.md 4.9): `cre` (409 `instruction with id <id> already
 * exists`; a missing or bad source `Error: Incorrect Syntax. …`, 400), `upd` (`lab` replaces,
 * `dat` merges, `ins` restarts it when it differs; 404 `unknown instruction <id>`), `rea`
 * (`dat:{"ins","lab","dat"}`), `lis` (entries exactly `{"id","lab","dat"}`), `del`. Records:
 * v1-instruction-records.ts.
 *
 * Rights: `cre`, `upd`, `del` need C, U, D on every id of the realm
 * (auth/instruction-rights.ts: an instruction acts on the whole realm); `rea` needs R on the
 * instruction's id, and `lis` shows the instructions whose id the token may read.
 */
import { checkInstructionWrite } from '../../../auth/instruction-rights.js';
import { checkAllowedOn, keepAllowed, readFilter } from '../../../auth/rights.js';
import type { Realm } from '../../../domain/types.js';
import type { V1Handler, V1HandlerTable, V1Message } from '../v1-handler.js';
import { instructionListEntry, instructionRead } from '../v1-instruction-records.js';
import type { HandlerDeps } from './deps.js';
import { idOf, v1Wording } from './v1-input.js';

const done = {};

/** `lab`, `ins` and `dat` as sent, under the names of the domain's body. */
function body(message: V1Message): Record<string, unknown> {
  const { lab, ins, dat } = message.raw;
  const out: Record<string, unknown> = {};
  if (lab !== undefined) out.label = lab;
  if (ins !== undefined) out.instruction = ins;
  if (dat !== undefined) out.data = dat;
  return out;
}

export function instructionsHandlers(deps: HandlerDeps): V1HandlerTable {
  const { instructions } = deps;

  const cre: V1Handler = {
    realm: 'rea',
    need: 'C',
    run: async (message, realm, caller) => {
      const entered = realm as Realm;
      checkInstructionWrite(caller.principal, entered.name, 'C');
      try {
        await instructions.create(entered, idOf(message), body(message));
      } catch (err) {
        throw v1Wording(err);
      }
      return done;
    },
  };

  const upd: V1Handler = {
    realm: 'rea',
    need: 'U',
    run: async (message, realm, caller) => {
      const entered = realm as Realm;
      checkInstructionWrite(caller.principal, entered.name, 'U');
      try {
        await instructions.update(entered, idOf(message), body(message));
      } catch (err) {
        throw v1Wording(err);
      }
      return done;
    },
  };

  const rea: V1Handler = {
    realm: 'rea',
    need: 'R',
    run: async (message, realm, caller) => {
      const entered = realm as Realm;
      const id = idOf(message);
      checkAllowedOn(caller.principal, entered.name, 'R', id);
      return { dat: instructionRead(await instructions.get(entered, id)) };
    },
  };

  const lis: V1Handler = {
    realm: 'rea',
    need: 'R',
    run: async (_message, realm, caller) => {
      const entered = realm as Realm;
      const readable = keepAllowed(await instructions.list(entered), readFilter(caller.principal, entered.name));
      return { dat: Object.fromEntries(readable.map((record) => [record.id, instructionListEntry(record)])) };
    },
  };

  const del: V1Handler = {
    realm: 'rea',
    need: 'D',
    run: async (message, realm, caller) => {
      const entered = realm as Realm;
      checkInstructionWrite(caller.principal, entered.name, 'D');
      await instructions.delete(entered, idOf(message));
      return done;
    },
  };

  return { ins: { cre, upd, rea, lis, del } };
}
