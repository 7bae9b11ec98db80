/** v1 `realms` actions (hivekit-compat.md). Placeholder: filled in by the work on issue #20. */
import type { V1HandlerTable } from '../v1-handler.js';
import type { HandlerDeps } from './deps.js';

export function realmsHandlers(_deps: HandlerDeps): V1HandlerTable {
  return {};
}
