/**
 * MongoDB errors translated into LocusError once, at the adapter boundary
 * (errors.ts is the one catalogue): a duplicate key is a `conflict`, a server that
 * cannot be reached or chosen is `unavailable`; anything else is `internal`, its text
 * kept only as the cause (logged, never sent).
 */
import { MongoError, MongoNetworkError, MongoServerSelectionError, MongoServerError, type Collection, type Document, type OptionalUnlessRequiredId } from 'mongodb';
import { LocusError } from '../../errors.js';

export const DUPLICATE_KEY = 11000;

export function isDuplicateKey(err: unknown): boolean {
  if (!(err instanceof MongoError)) return false;
  if (err.code === DUPLICATE_KEY) return true;
  // A bulk write reports its write errors inside.
  const writeErrors = (err as { writeErrors?: unknown }).writeErrors;
  return Array.isArray(writeErrors) && writeErrors.some((e: { code?: unknown }) => e.code === DUPLICATE_KEY);
}

export function isUnreachable(err: unknown): boolean {
  if (err instanceof MongoServerSelectionError || err instanceof MongoNetworkError) return true;
  return err instanceof MongoError && (err.hasErrorLabel('RetryableWriteError') || err.hasErrorLabel('TransientTransactionError'));
}

/** Inserts a new document; a duplicate key throws what `exists` makes of the driver's error (a `conflict` naming the document). */
export async function insertNew<T extends Document>(collection: Collection<T>, doc: OptionalUnlessRequiredId<T>, exists: (err: unknown) => LocusError): Promise<void> {
  try {
    await collection.insertOne(doc);
  } catch (err) {
    if (isDuplicateKey(err)) throw exists(err);
    throw err;
  }
}

/** The LocusError for anything a driver call threw (a LocusError passes unchanged). */
export function translateMongoError(err: unknown): LocusError {
  if (err instanceof LocusError) return err;
  if (isDuplicateKey(err)) return new LocusError('conflict', 'already exists', { cause: err });
  if (isUnreachable(err)) return new LocusError('unavailable', 'the store (MongoDB) cannot be reached', { cause: err });
  if (err instanceof MongoServerError && err.code === 10334) return new LocusError('too_large', 'the object is too large to store', { cause: err });
  return new LocusError('internal', 'internal error', { cause: err });
}

/** Runs `body`, translating what it throws. */
export async function guarded<T>(body: () => Promise<T>): Promise<T> {
  try {
    return await body();
  } catch (err) {
    throw translateMongoError(err);
  }
}
