/**
 * Types of k6/x/tcp (grafana/xk6-tcp, the official TCP extension k6 resolves automatically
 * when a script imports it; @types/k6 does not cover extensions). Only what the scripts use.
 */
declare module 'k6/x/tcp' {
  export interface SocketOptions {
    tags?: Record<string, string>;
  }
  export class Socket {
    constructor(options?: SocketOptions);
    connect(port: number, host: string): Promise<void>;
    write(data: string | ArrayBuffer): Promise<void>;
    destroy(): void;
    on(event: 'data', handler: (data: ArrayBuffer) => void): void;
    on(event: 'connect' | 'close' | 'timeout', handler: () => void): void;
    on(event: 'error', handler: (error: unknown) => void): void;
  }
}
