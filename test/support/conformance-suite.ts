/** The shared setup of a conformance describe block: one server per block, an optional signed-in wire, clean wires after each test. */
import { after, afterEach, before } from 'node:test';
import type { Harness } from './harness.js';
import {
  assertSuc,
  assertWiresClean,
  connectWire,
  startConformance,
  type Conformance,
  type HivekitWire,
  type Json,
  type Msg,
} from './hivekit-wire.js';

/** The started server's fields, the suite's wire and `req`; each throws when read before the block's `before` hook ran. */
export interface ConformanceSuite {
  readonly h: Harness;
  readonly url: string;
  readonly tcpPort: number;
  readonly token: string;
  readonly realm: string;
  /** A WebSocket signed in with `token`, opened in `before` (not with `{ wire: false }`). */
  readonly wire: HivekitWire;
  /** Sends one message on `wire` and resolves with its reply. */
  readonly req: (m: Msg) => Promise<Json>;
  /** Reads one object or area with `rea` on `wire` (in the suite's realm unless given), asserts `suc` and resolves with its `dat`. */
  readonly read: (typ: 'obj' | 'are', id: string, realm?: string) => Promise<Json>;
}

/**
 * Registers the block's hooks (call it first in the describe, so the block's own `before` hooks run
 * after the server is up): `before` starts the server (`startConformance(area)`) and signs in a
 * wire, `after` stops it, `afterEach` asserts every wire stayed clean.
 */
export function conformanceSuite(area: string, options: { wire?: boolean } = {}): ConformanceSuite {
  let started: Conformance | undefined;
  let signedIn: HivekitWire | undefined;
  const ready = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`conformanceSuite('${area}'): ${what} (read it in tests and in hooks after the suite's before)`);
    return value;
  };
  const server = (): Conformance => ready(started, 'the server has not started');
  const wire = (): HivekitWire => ready(signedIn, options.wire === false ? 'the suite opens no wire (wire: false)' : 'the wire is not connected');

  before(async () => {
    started = await startConformance(area);
    if (options.wire !== false) signedIn = await connectWire(started.url, started.token);
  });
  after(async () => {
    await started?.stop();
  });
  afterEach(() => assertWiresClean());

  return {
    get h() {
      return server().h;
    },
    get url() {
      return server().url;
    },
    get tcpPort() {
      return server().tcpPort;
    },
    get token() {
      return server().token;
    },
    get realm() {
      return server().realm;
    },
    get wire() {
      return wire();
    },
    req: (m) => wire().request(m),
    read: async (typ, id, realm): Promise<Json> => {
      const r = await wire().request({ typ, act: 'rea', id, rea: realm ?? server().realm });
      assertSuc(r);
      return r.dat;
    },
  };
}
