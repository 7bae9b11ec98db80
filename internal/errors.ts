/**
 * The one error catalogue. Every failure the service reports is a LocusError with a
 * stable code; this table alone decides its HTTP status (which is also its v1 `erc`; the
 * v1 `err` is its message) and, for connection-level failures, the WebSocket close code.
 * Foreign errors (SQLite, MongoDB, express body parser) are mapped to these once, at
 * the adapter boundary.
 */
export const errorCatalogue = {
  invalid_request: { status: 400 },
  invalid_json: { status: 400 },
  invalid_id: { status: 400 },
  invalid_location: { status: 400 },
  invalid_data: { status: 400 },
  invalid_shape: { status: 400 },
  invalid_filter: { status: 400 },
  invalid_query: { status: 400 },
  invalid_cursor: { status: 400 },
  invalid_settings: { status: 400 },
  /** A HiveScript source that does not parse or check; the message begins `Error: Incorrect Syntax.` (compat 4.9). */
  invalid_instruction: { status: 400 },
  unauthorized: { status: 401, closeCode: 4401 },
  forbidden: { status: 403, closeCode: 4403 },
  not_found: { status: 404 },
  method_not_allowed: { status: 405 },
  conflict: { status: 409 },
  too_large: { status: 413, closeCode: 1009 },
  unsupported_media_type: { status: 415 },
  /** A plain HTTP request to the WebSocket endpoint. */
  upgrade_required: { status: 426 },
  /** A connection sent nothing within the handshake or idle timeout (v1 WebSocket/TCP). */
  timeout: { status: 408, closeCode: 4408 },
  rate_limited: { status: 429, closeCode: 4429 },
  /** A subscriber that reads events more slowly than they come (v1 WebSocket/TCP). */
  slow_consumer: { status: 503, closeCode: 4008 },
  /** A Hivekit feature a server was built without (instruction and log subscriptions where no instruction store is wired in). */
  not_implemented: { status: 501 },
  internal: { status: 500, closeCode: 1011 },
  unavailable: { status: 503, closeCode: 1013 },
} as const satisfies Record<string, { status: number; closeCode?: number }>;

export type ErrorCode = keyof typeof errorCatalogue;

export class LocusError extends Error {
  override readonly name: string = 'LocusError';
  readonly code: ErrorCode;
  /** Extra response headers this error asks for (e.g. Retry-After). */
  readonly headers: Readonly<Record<string, string>>;

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown; headers?: Record<string, string> }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.headers = options?.headers ?? {};
  }

  get status(): number {
    return errorCatalogue[this.code].status;
  }
}

export const invalid = (message: string, code: ErrorCode = 'invalid_request'): LocusError =>
  new LocusError(code, message);
export const notFound = (message: string): LocusError => new LocusError('not_found', message);
export const conflict = (message: string): LocusError => new LocusError('conflict', message);
/** Texts Hivekit's v1 clients assert verbatim; REST v2 uses the same so that both APIs agree. */
export const unknownRealm = (realmId: string): LocusError => notFound(`unknown realm ${realmId.slice(0, 256)}`);
export const areaExists = (areaId: string, cause?: unknown): LocusError =>
  new LocusError('conflict', `area with id ${areaId} already exists`, { cause });
export const realmExists = (realmId: string, cause?: unknown): LocusError =>
  new LocusError('conflict', `realm with id ${realmId} already exists`, { cause });
/** v1 texts for a missing object or area (compat 4.2, 4.3). */
export const unknownObject = (objectId: string): LocusError => notFound(`unknown object ${objectId.slice(0, 256)}`);
export const unknownArea = (areaId: string): LocusError => notFound(`unknown area ${areaId.slice(0, 256)}`);
/** v1 texts for instructions and tasks (compat 4.9, 4.10). */
export const instructionExists = (id: string, cause?: unknown): LocusError =>
  new LocusError('conflict', `instruction with id ${id} already exists`, { cause });
export const unknownInstruction = (id: string): LocusError => notFound(`unknown instruction ${id.slice(0, 256)}`);
export const taskExists = (id: string, cause?: unknown): LocusError => new LocusError('conflict', `task with id ${id} already exists`, { cause });
export const unknownTask = (id: string): LocusError => notFound(`unknown task ${id.slice(0, 256)}`);
export const tooLarge = (message: string): LocusError => new LocusError('too_large', message);

/** Maps anything thrown to a LocusError; unknown errors become `internal` without leaking their text. */
export function toLocusError(err: unknown): LocusError {
  if (err instanceof LocusError) return err;
  return new LocusError('internal', 'internal error', { cause: err });
}

/** The v2 error body. */
export function errorBody(err: LocusError): { result: 'error'; error: { code: ErrorCode; message: string } } {
  return { result: 'error', error: { code: err.code, message: err.message } };
}

export function closeCodeOf(err: LocusError): number {
  const entry = errorCatalogue[err.code];
  return 'closeCode' in entry ? entry.closeCode : 1008;
}
