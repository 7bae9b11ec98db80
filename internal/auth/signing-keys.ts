/** JWT signing keys: ids and secrets (256 random bits, base64url, shown once). */
import { randomBytes } from 'node:crypto';

export function generateKeyId(): string {
  return 'key_' + randomBytes(8).toString('hex');
}

/** The secret a tenant signs its JWTs with; the HMAC key is this string's UTF-8 bytes, as JWT libraries take a string secret. */
export function generateKeySecret(): string {
  return randomBytes(32).toString('base64url');
}
