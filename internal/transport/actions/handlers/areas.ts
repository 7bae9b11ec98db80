/** v1 `areas` actions (hivekit-compat.md). Placeholder: filled in by the work on issue #20. */
import type { V1HandlerTable } from '../v1-handler.js';
import type { HandlerDeps } from './deps.js';

export function areasHandlers(_deps: HandlerDeps): V1HandlerTable {
  return {};
}
