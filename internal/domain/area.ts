/** Area update rules and the shape summary shown in lists. */
import { mergeData } from './object.js';
import type { Area, AreaPatch, Shape, ShapeType } from './types.js';

export function shapeTypeOf(shape: Shape): ShapeType {
  if ('r' in shape) return 'circle';
  if ('points' in shape) return 'polygon';
  return 'rectangle';
}

/** A given label or shape replaces the old one; data merges key by key, null removes. */
export function applyAreaPatch(old: Area, patch: AreaPatch): Area {
  return {
    id: old.id,
    label: patch.label === undefined ? old.label : patch.label,
    shape: patch.shape ?? old.shape,
    data: mergeData(old.data, patch.data),
  };
}
