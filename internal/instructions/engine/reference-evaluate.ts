/**
 * A program's `when` set computed from scratch by brute force: every object and area of the
 * mirror, every pair of objects, with no index. The yardstick the incremental evaluator is
 * tested against, and a check for repairs. Decides with the same comparisons
 * (conditions.ts) and geometry (geo/contains.ts) as the evaluator. Pure: no I/O.
 */
import { containsPoint } from '../../geo/contains.js';
import { entryKey, type Program } from '../language/ast.js';
import { aggregatesOf, computeAggregates, matcherOf, type MatchContext } from './conditions.js';
import { withinRadius, type RealmMirror } from './realm-mirror.js';

/** The entry keys of the program's `when` set over the mirror's objects and areas. */
export function referenceEvaluate(program: Program, mirror: RealmMirror): Set<string> {
  const objects = [...mirror.objects.values()];
  const areas = [...mirror.areas.values()];
  const aggregates = computeAggregates(aggregatesOf(program), objects);
  const plain: MatchContext = { aggregates, self: null };
  const out = new Set<string>();
  const when = program.when;
  const filter = matcherOf(when.filter);
  switch (when.kind) {
    case 'objects':
      for (const obj of objects) if (filter.matches(obj, plain)) out.add(entryKey({ kind: 'object', id: obj.id }));
      break;
    case 'areas':
      for (const area of areas) if (filter.matches(area, plain)) out.add(entryKey({ kind: 'area', id: area.id }));
      break;
    case 'pairs': {
      const partners = matcherOf(when.partner);
      for (const a of objects) {
        if (a.location === null || !filter.matches(a, plain)) continue;
        for (const b of objects) {
          if (b.id === a.id || b.location === null || !withinRadius(a.location, b.location, when.radius)) continue;
          if (partners.matches(b, { aggregates, self: a })) out.add(entryKey({ kind: 'pair', a: a.id, b: b.id }));
        }
      }
      break;
    }
    case 'areasContaining': {
      const wanted = matcherOf(when.objects);
      for (const area of areas) {
        if (!filter.matches(area, plain)) continue;
        const holds = objects.some(
          (obj) => obj.location !== null && wanted.matches(obj, plain) && containsPoint(area.shape, obj.location.longitude, obj.location.latitude),
        );
        if (holds) out.add(entryKey({ kind: 'area', id: area.id }));
      }
      break;
    }
    case 'objectsInside': {
      const wanted = matcherOf(when.areas);
      for (const obj of objects) {
        const at = obj.location;
        if (at === null || !filter.matches(obj, plain)) continue;
        if (areas.some((area) => wanted.matches(area, plain) && containsPoint(area.shape, at.longitude, at.latitude))) {
          out.add(entryKey({ kind: 'object', id: obj.id }));
        }
      }
      break;
    }
  }
  return out;
}
