/** API token secrets: 256 random bits, shown once; only their SHA-256 is stored. */
import { createHash, randomBytes } from 'node:crypto';

const secretPrefix = 'lcs_';

export function generateSecret(): string {
  return secretPrefix + randomBytes(32).toString('base64url');
}

export function generateTokenId(): string {
  return 'tok_' + randomBytes(8).toString('hex');
}

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}
