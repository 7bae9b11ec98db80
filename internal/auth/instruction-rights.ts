/**
 * Who may change instructions. An instruction's actions reach every object and area of its
 * realm (`set`, `delete`, `sendToUrl` of what it selects), so a token whose `per` grants
 * writes only on some ids must not be able to create one that writes on the others: creating,
 * updating and deleting an instruction needs the letter (C, U, D) on every id of the realm (a
 * `per` pattern of only `*`s, in the realm or in realm `*`), or a token without `per` (opaque
 * tokens: scope write). Reading needs R on the instruction's id, like any entity. Pure.
 */
import { LocusError } from '../errors.js';
import type { Principal, Right } from './principal.js';
import { idFilter } from './rights.js';

/** Throws a 403 unless the principal holds `right` on every id of the realm. */
export function checkInstructionWrite(principal: Principal, realmName: string, right: Exclude<Right, 'R'>): void {
  if (idFilter(principal, realmName, right) === null) return;
  throw new LocusError(
    'forbidden',
    `the token's permissions do not grant ${right} on every id of realm ${realmName.slice(0, 256)}, which changing an instruction needs (its actions reach every object and area of the realm)`,
  );
}
