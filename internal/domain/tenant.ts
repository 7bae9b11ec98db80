/** Tenant ids and labels (decisions.md "Tenants"). Pure. */
import { invalid } from '../errors.js';
import { checkName, describe } from './ids.js';

/** 1–64 characters: lowercase letters, digits and `-` (a Kubernetes namespace fits). */
const TENANT_ID = /^[a-z0-9-]{1,64}$/;

export function isTenantId(value: string): boolean {
  return TENANT_ID.test(value);
}

/** A tenant id, or 400 `invalid_id`. */
export function parseTenantId(value: unknown): string {
  if (typeof value !== 'string' || !TENANT_ID.test(value)) {
    throw invalid(`tenant id must be 1-64 characters of lowercase letters, digits and "-" (got ${describe(value)})`, 'invalid_id');
  }
  return value;
}

/** An optional tenant label: absent or null → null; else 1–256 bytes without control characters. */
export function parseTenantLabel(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') throw invalid(`tenant label must be a string (got ${describe(value)})`);
  checkName(value, 'tenant label', 'invalid_request');
  return value;
}
