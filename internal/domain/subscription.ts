/**
 * What a Hivekit subscription watches, spelled out (hivekit-compat.md 5.1, 5.2): the v1 options
 * (`dat.typ`, `sty`, `sha`, `sta`, `atr`) are parsed into these at the edge
 * (transport/actions/subscription-options.ts); service/live keeps them. Pure types.
 */
import type { FilterCondition, Shape } from './types.js';

/** Where an object subscription looks: the whole realm, a shape, or a circle around a target object. */
export type ObjectScope = { kind: 'realm' } | { kind: 'shape'; shape: Shape } | { kind: 'target'; target: string; radius: number };

export interface ObjectOptions {
  kind: 'objects';
  scope: ObjectScope;
  /** Attribute conditions, all of which must hold. */
  conditions: FilterCondition[];
}

/**
 * Objects; the realm's areas; its tasks; its label and data; realm events of the tenant; the
 * realm's instructions; its instruction log events.
 */
export type SubscriptionOptions =
  | ObjectOptions
  | { kind: 'areas' }
  | { kind: 'tasks' }
  | { kind: 'realmData' }
  | { kind: 'realmEvents' }
  | { kind: 'instructions' }
  | { kind: 'log' };

export type SubscriptionKind = SubscriptionOptions['kind'];

/** How much a subscription's options may hold (LOCUS_MAX_POLYGON_VERTICES, LOCUS_MAX_FILTER_CONDITIONS). */
export interface OptionLimits {
  maxVertices: number;
  maxConditions: number;
}
