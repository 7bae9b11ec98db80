/**
 * v1 `sys` actions (compat 4.7): `hbt` (the client's heartbeat, answered with its `cid`), the
 * locus extension `pin` (`dat.time`: the server's clock), and `aut` sent as JSON, which is
 * refused: sign-in is the `Bearer <token>` frame (or the Authorization header over HTTP).
 */
import { invalid } from '../../../errors.js';
import { isoTime } from '../../../service/clock.js';
import type { V1HandlerTable } from '../v1-handler.js';
import type { HandlerDeps } from './deps.js';

export function systemHandlers(deps: HandlerDeps): V1HandlerTable {
  return {
    sys: {
      hbt: { realm: 'none', need: 'R', run: () => Promise.resolve({}) },
      pin: { realm: 'none', need: 'R', run: () => Promise.resolve({ dat: { time: isoTime(deps.clock()) } }) },
      aut: {
        realm: 'none',
        need: 'R',
        run: () =>
          Promise.reject(
            invalid('sign-in is the first frame of a connection, the text "Bearer <token>" (not JSON), or the Authorization header over HTTP'),
          ),
      },
    },
  };
}
