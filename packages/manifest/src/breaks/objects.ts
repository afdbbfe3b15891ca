import { finding, type FindingCollector, segment } from './findings.js';
import { isObject, sameWithoutRefs } from './json.js';
import type { SchemaNode } from './nodes.js';
import { shown, type Walk } from './walk.js';

function has(record: Record<string, unknown>, key: string): boolean {
  return Object.hasOwn(record, key);
}

function propertiesOf(node: SchemaNode): Record<string, unknown> {
  return isObject(node.kw.properties) ? node.kw.properties : {};
}

const NO_NAMES: readonly string[] = [];

function requiredOf(node: SchemaNode): readonly unknown[] {
  return Array.isArray(node.kw.required) ? node.kw.required : NO_NAMES;
}

/** The schema a property not listed in `properties` falls under: a matching pattern, or the rest. */
function unlistedSchema(node: SchemaNode, name: string): unknown {
  const patterns = node.kw.patternProperties;
  if (isObject(patterns)) {
    for (const [pattern, schema] of Object.entries(patterns)) {
      try {
        if (new RegExp(pattern, 'u').test(name)) return schema;
      } catch {
        // A pattern this engine cannot read decides nothing.
      }
    }
  }
  return node.kw.additionalProperties;
}

/** Presence (`required`), each property, and what the object accepts beyond its properties. */
export function compareObjects(walk: Walk, old: SchemaNode, next: SchemaNode, out: FindingCollector): void {
  const oldProps = propertiesOf(old);
  const nextProps = propertiesOf(next);
  const oldRequired = requiredOf(old);
  const nextRequired = requiredOf(next);
  // Old's properties, then next's new ones, then names only `required` lists: walk order.
  const names: string[] = [];
  for (const name in oldProps) names.push(name);
  for (const name in nextProps) if (!has(oldProps, name)) names.push(name);
  for (const name of [...oldRequired, ...nextRequired]) {
    if (typeof name === 'string' && !has(oldProps, name) && !has(nextProps, name) && !names.includes(name)) names.push(name);
  }
  for (const name of names) {
    const inOld = has(oldProps, name);
    const inNext = has(nextProps, name);
    if (walk.reader && nextRequired.includes(name) && !oldRequired.includes(name)) {
      out.add(
        finding(walk.codes.required, inOld ? 'is now required (was optional)' : 'is now required (it is new)'),
        segment.property(name),
      );
    }
    if (!walk.reader && oldRequired.includes(name) && !nextRequired.includes(name)) {
      out.add(
        finding(walk.codes.required, inNext ? 'is now optional (was required)' : 'is gone (was always present)'),
        segment.property(name),
      );
    }
    if (!inOld && !inNext) continue;
    const oldSchema = inOld ? oldProps[name] : unlistedSchema(old, name);
    const nextSchema = inNext ? nextProps[name] : unlistedSchema(next, name);
    if (walk.reader && inOld && nextSchema === false && oldSchema !== false) {
      const why = inNext ? 'its schema is now false' : 'next has no such argument and accepts no others';
      out.add(finding('argument-no-longer-accepted', `is no longer accepted (${why})`), segment.property(name));
      continue;
    }
    // A property listed on one side only is compared with the other side's catch-all when
    // that is a schema (a map's values). Against `true` or `false` it breaks nothing: an
    // added field or argument is the additive change callers tolerate, an optional result
    // field that is gone was never promised, and an argument that is gone under an open
    // object is ignored rather than refused.
    if ((!inOld && typeof oldSchema === 'boolean') || (!inNext && typeof nextSchema === 'boolean')) continue;
    if (!inOld && oldSchema === undefined) continue;
    if (!inNext && nextSchema === undefined) continue;
    if (inOld && inNext && sameWithoutRefs(oldSchema, nextSchema)) continue;
    const found = walk.compare(walk.node(oldSchema, old), walk.node(nextSchema, next));
    if (!found.empty) out.addTree(segment.property(name), found);
  }
  const oldRest = old.kw.additionalProperties;
  const nextRest = next.kw.additionalProperties;
  if (walk.reader && oldRest !== false && nextRest === false) {
    const listed = Object.keys(nextProps);
    const only = listed.length > 0 ? `other than ${listed.map((n) => `\`${n}\``).join(', ')}` : 'at all';
    out.add(
      finding(
        'argument-no-longer-accepted',
        `no longer accepts properties ${only} (additionalProperties was ${shown(oldRest)}, now false)`,
      ),
      segment.closure,
    );
  } else if (oldRest !== false && nextRest !== false && (isObject(oldRest) || isObject(nextRest))) {
    // Closed result objects are not compared: old callers tolerate added fields.
    out.addTree(segment.additional, walk.compare(walk.node(oldRest, old), walk.node(nextRest, next)));
  }
}
