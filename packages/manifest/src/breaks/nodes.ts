import { canonical, intersectTypes, isObject, type JsonType, typeAllows, typeOfValue, typesFromKeyword } from './json.js';
import { ANNOTATIONS, type Keywords, mergeKeywords } from './keywords.js';
import { MAX_SCHEMA_DEPTH, SchemaTooDeep } from './limits.js';
import { resolveLocalRef } from './refs.js';

/**
 * A schema read once into the shape the comparison needs: references and `allOf` folded in,
 * the three spellings of nullability (`type: [T, "null"]`, `nullable: true`, a null branch
 * of `oneOf`/`anyOf`) made one, `const` read as a one-value enum.
 */
export interface SchemaNode {
  /** Identity for memoising pairs of nodes; equal ids are the same node. */
  readonly id: number;
  /** The document the node's local `$ref`s resolve against. */
  readonly root: unknown;
  readonly kw: Keywords;
  /** The types a value may have; `null` for any type. Includes `null` when nullable. */
  readonly types: ReadonlySet<JsonType> | null;
  /** The non-null values allowed, when the schema lists them (`enum`, `const`). */
  readonly enumValues: readonly unknown[] | null;
  readonly enumKeys: ReadonlySet<string> | null;
  /** The non-null branches of a `oneOf`/`anyOf` with two or more of them, siblings folded in. */
  readonly branches: readonly SchemaNode[] | null;
  readonly unionKeyword: 'oneOf' | 'anyOf' | null;
  /** Whether `null` is allowed; for a union, whether it had a null branch. */
  readonly nullable: boolean;
  /** Nothing is allowed (`false`, or contradictory types). */
  readonly never: boolean;
}

interface NodeParts {
  kw: Keywords;
  types: ReadonlySet<JsonType> | null;
  enumValues?: readonly unknown[] | null;
  branches?: readonly SchemaNode[] | null;
  unionKeyword?: 'oneOf' | 'anyOf' | null;
  nullable?: boolean;
}

const PENDING = Symbol('pending');

function isNullOnly(node: SchemaNode): boolean {
  return node.branches === null && node.types !== null && node.types.size === 1 && node.types.has('null');
}

function withoutKeys(kw: Keywords, keys: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = { ...kw };
  for (const key of keys) out[key] = undefined;
  return out;
}

/** A `$ref` with nothing beside it but a title and annotations. */
function isBareRef(raw: Keywords): boolean {
  for (const k in raw) if (k !== '$ref' && k !== 'title' && !ANNOTATIONS.has(k)) return false;
  return true;
}

/** Whether keywords constrain anything (a title or other annotations alone do not). */
function constrains(kw: Keywords): boolean {
  for (const k in kw) if (k !== 'title' && kw[k] !== undefined && !ANNOTATIONS.has(k)) return true;
  return false;
}

/**
 * Reads schemas into nodes and keeps them: each raw schema object of a document maps to one
 * node, so a recursive type meets the same node again and the walk can tell.
 */
export class SchemaGraph {
  private lastId = 0;
  // Plain maps, not weak ones: a graph lives for one comparison, and weak maps cost the
  // garbage collector far more than they save here.
  private readonly byRoot = new Map<unknown, Map<object, SchemaNode | typeof PENDING>>();
  private readonly nonNull = new Map<SchemaNode, SchemaNode>();
  private readonly withNull = new Map<SchemaNode, SchemaNode>();
  private readonly byType = new Map<SchemaNode, Map<JsonType, SchemaNode>>();
  private readonly splits = new Map<SchemaNode, readonly SchemaNode[]>();
  private readonly refs = new Map<unknown, Map<string, unknown>>();
  /** Schemas being read inside one another (a chain of bare references nests reads). */
  private reading = 0;
  readonly any: SchemaNode;
  readonly nothing: SchemaNode;

  constructor() {
    this.any = this.make(undefined, { kw: {}, types: null });
    this.nothing = this.make(undefined, { kw: {}, types: new Set() });
  }

  /** The node for a schema found in `root`. Anything that is not a schema object reads as `true`. */
  node(raw: unknown, root: unknown): SchemaNode {
    if (raw === false) return this.nothing;
    if (!isObject(raw)) return this.any;
    let cache = this.byRoot.get(root);
    if (cache === undefined) {
      cache = new Map();
      this.byRoot.set(root, cache);
    }
    const cached = cache.get(raw);
    // A reference loop with nothing in between (`A: {$ref: B}, B: {$ref: A}`) constrains nothing.
    if (cached === PENDING) return this.any;
    if (cached !== undefined) return cached;
    if (this.reading >= MAX_SCHEMA_DEPTH) throw new SchemaTooDeep();
    cache.set(raw, PENDING);
    this.reading++;
    try {
      const node = this.read(raw, root);
      cache.set(raw, node);
      return node;
    } finally {
      this.reading--;
    }
  }

  private read(raw: Record<string, unknown>, root: unknown): SchemaNode {
    if (typeof raw.$ref === 'string' && isBareRef(raw)) {
      // A bare reference is the referenced schema itself: `$defs` refactors change nothing.
      return this.node(this.resolve(root, raw.$ref), root);
    }
    return this.fromKeywords(this.fold(raw, root, new Set([raw])), root);
  }

  private resolve(root: unknown, ref: string): unknown {
    let known = this.refs.get(root);
    if (known === undefined) {
      known = new Map();
      this.refs.set(root, known);
    }
    if (!known.has(ref)) known.set(ref, resolveLocalRef(root, ref));
    return known.get(ref);
  }

  /** Folds `$ref` and `allOf` into one set of keywords. */
  private fold(raw: Record<string, unknown>, root: unknown, seen: Set<object>): Keywords {
    // Most schemas have neither: their own keywords serve as they are (annotations included,
    // which nothing reads as a constraint).
    if (raw.$ref === undefined && raw.allOf === undefined) return raw;
    const own: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(raw)) {
      if (key !== '$ref' && key !== 'allOf' && !ANNOTATIONS.has(key)) own[key] = value;
    }
    let kw: Keywords = own;
    if (typeof raw.$ref === 'string') kw = mergeKeywords(kw, this.foldMember(this.resolve(root, raw.$ref), root, seen));
    if (Array.isArray(raw.allOf)) {
      for (const member of raw.allOf) kw = mergeKeywords(kw, this.foldMember(member, root, seen));
    }
    return kw;
  }

  private foldMember(member: unknown, root: unknown, seen: Set<object>): Keywords {
    if (member === false) return { type: [] };
    // `true`, an unresolvable reference, or a loop of references: no constraint.
    if (!isObject(member) || seen.has(member)) return {};
    if (seen.size >= MAX_SCHEMA_DEPTH) throw new SchemaTooDeep();
    seen.add(member);
    const kw = this.fold(member, root, seen);
    seen.delete(member);
    return kw;
  }

  private fromKeywords(kw: Keywords, root: unknown): SchemaNode {
    const keyword = Array.isArray(kw.oneOf) ? 'oneOf' : Array.isArray(kw.anyOf) ? 'anyOf' : null;
    if (keyword === null) return this.plain(kw, root);
    // A schema with both reads through `oneOf`; generated manifests never carry both.
    const siblings = withoutKeys(kw, ['oneOf', 'anyOf']);
    const members = (kw[keyword] as unknown[]).map((member) => this.node(member, root));
    const nullable = members.some(isNullOnly);
    const rest = members.filter((m) => !m.never && !isNullOnly(m));
    if (rest.length === 0) return this.plain(mergeKeywords(siblings, { type: nullable ? ['null'] : [] }), root);
    if (rest.length === 1) {
      const only = constrains(siblings) ? this.fromKeywords(mergeKeywords(siblings, rest[0].kw), root) : rest[0];
      return nullable ? this.nullableOf(only) : only;
    }
    const shared = withoutKeys(siblings, ['title']);
    const branches = constrains(shared) ? rest.map((b) => this.fromKeywords(mergeKeywords(shared, b.kw), root)) : rest;
    let types: Set<JsonType> | null = new Set(nullable ? ['null'] : []);
    for (const b of branches) {
      if (b.types === null) {
        types = null;
        break;
      }
      for (const t of b.types) types.add(t);
    }
    return this.make(root, { kw: siblings, types, branches, unionKeyword: keyword, nullable });
  }

  private plain(kw: Keywords, root: unknown): SchemaNode {
    let types: ReadonlySet<JsonType> | null = typesFromKeyword(kw.type);
    let values: unknown[] | null = null;
    if (kw.const !== undefined) values = [kw.const];
    if (Array.isArray(kw.enum)) {
      const listed = new Set(kw.enum.map(canonical));
      values = values === null ? [...kw.enum] : values.filter((v) => listed.has(canonical(v)));
    }
    if (values !== null) {
      types = intersectTypes(types, new Set(values.map(typeOfValue)));
      const allowed = types;
      values = values.filter((v) => v !== null && typeAllows(allowed, typeOfValue(v)));
    }
    // OpenAPI's spelling of nullability; it adds null whatever the type or enum says.
    if (kw.nullable === true && types !== null) types = new Set([...types, 'null' as const]);
    return this.make(root, { kw, types, enumValues: values });
  }

  private make(root: unknown, parts: NodeParts): SchemaNode {
    const enumValues = parts.enumValues ?? null;
    const branches = parts.branches ?? null;
    return {
      id: ++this.lastId,
      root,
      kw: parts.kw,
      types: parts.types,
      enumValues,
      enumKeys: enumValues === null ? null : new Set(enumValues.map(canonical)),
      branches,
      unionKeyword: parts.unionKeyword ?? null,
      nullable: branches !== null ? (parts.nullable ?? false) : typeAllows(parts.types, 'null'),
      never: branches === null && parts.types !== null && parts.types.size === 0,
    };
  }

  private nullableOf(node: SchemaNode): SchemaNode {
    if (node.nullable) return node;
    let out = this.withNull.get(node);
    if (out === undefined) {
      const types = node.types === null ? null : new Set([...node.types, 'null' as const]);
      out = this.make(node.root, { ...node, types, nullable: true });
      this.withNull.set(node, out);
      // Stripping null again must give back the very node, so a recursive type wrapped in
      // `anyOf: [{$ref}, {type: null}]` is recognised as the same node when it recurs.
      this.nonNull.set(out, node);
    }
    return out;
  }

  /** The node with `null` no longer allowed: what its branches are compared as. */
  withoutNull(node: SchemaNode): SchemaNode {
    if (!node.nullable || node.types === null) return node;
    let out = this.nonNull.get(node);
    if (out === undefined) {
      const types = new Set([...node.types].filter((t) => t !== 'null'));
      out = this.make(node.root, { ...node, types, nullable: false });
      this.nonNull.set(node, out);
    }
    return out;
  }

  private restrictedTo(node: SchemaNode, t: JsonType): SchemaNode {
    let views = this.byType.get(node);
    if (views === undefined) {
      views = new Map();
      this.byType.set(node, views);
    }
    let out = views.get(t);
    if (out === undefined) {
      const enumValues = node.enumValues === null ? null : node.enumValues.filter((v) => typeAllows(new Set([t]), typeOfValue(v)));
      out = this.make(node.root, { kw: node.kw, types: new Set([t]), enumValues });
      views.set(t, out);
    }
    return out;
  }

  /**
   * The alternatives a schema offers, null left out: a union's branches, or one view per type
   * of a multi-type schema (so `type: [string, integer]` pairs with a union of the two), or
   * the schema itself.
   */
  branchesOf(node: SchemaNode): readonly SchemaNode[] {
    if (node.branches !== null) return node.branches;
    let out = this.splits.get(node);
    if (out === undefined) {
      const bare = this.withoutNull(node);
      if (bare.types !== null && bare.types.size > 1) {
        out = [...bare.types].map((t) => this.restrictedTo(bare, t));
      } else {
        out = bare.never ? [] : [bare];
      }
      this.splits.set(node, out);
    }
    return out;
  }
}
