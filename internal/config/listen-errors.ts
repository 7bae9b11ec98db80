/**
 * Turns a listener's failure to bind into a ConfigError naming the setting to change, so
 * that start-up reports `LOCUS_HTTP_PORT=8080: port already in use on 0.0.0.0` instead of
 * a stack. Errors that no setting explains are returned as they are.
 */
import { ConfigError } from './config.js';

export interface ListenSetting {
  /** The variable of the port (`LOCUS_HTTP_PORT`, `LOCUS_TCP_PORT`). */
  portVariable: string;
  port: number;
  host: string;
}

function codeOf(err: Error): string | undefined {
  const { code } = err as { code?: unknown };
  return typeof code === 'string' ? code : undefined;
}

export function listenFailure(err: Error, setting: ListenSetting): Error {
  const { portVariable, port, host } = setting;
  const at = `${portVariable}=${port}`;
  const options = { cause: err };
  switch (codeOf(err)) {
    case 'EADDRINUSE':
      return new ConfigError(`${at}: port already in use on ${host} (LOCUS_HOST)`, options);
    case 'EACCES':
      return new ConfigError(`${at}: no permission to listen on ${host} (LOCUS_HOST); ports below 1024 need privileges`, options);
    case 'EADDRNOTAVAIL':
      return new ConfigError(`LOCUS_HOST=${host}: not an address of this machine (listening for ${at})`, options);
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new ConfigError(`LOCUS_HOST=${host}: host name not found (listening for ${at})`, options);
    default:
      return err;
  }
}
