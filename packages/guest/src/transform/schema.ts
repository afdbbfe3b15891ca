/**
 * JSON Schema from AssemblyScript types, as the design notes' first seed has it for Rust: integers
 * carry their width as `format` (`int32`, `uint8`, ...) and unsigned ones `minimum: 0`; `f32`/`f64`
 * are numbers (`float`/`double`); nested `@json` classes are object schemas titled with the class
 * name. Schemas are inline: a class that contains itself cannot be rendered and is reported.
 *
 * A field is required in arguments when it has no initializer (the initializer is its default),
 * and in results and events unless json-as may leave it out (`@omitnull`, `@omitif`).
 *
 * Two field types json-as 1.6 reads worse than it writes, in the classes of arguments: a `JSON.Value`
 * field takes only an object (any other value aborts the call, or leaves an optional field's initial
 * value without a word), so there the schema says object and the host refuses what the tool could not
 * read; an `isize` or `usize` field is skipped when its key does not come in declaration order, which
 * no caller can know, so it is refused. As items of an array or values of a map, both are read whatever
 * the order and the value.
 */
import { CommonFlags, ElementKind, NodeKind, TypeKind } from 'assemblyscript';
import type {
  Class,
  ClassDeclaration,
  DecoratorNode,
  Expression,
  FieldDeclaration,
  IdentifierExpression,
  LiteralExpression,
  Program,
  Property,
  PropertyPrototype,
  Range,
  StringLiteralExpression,
  Type,
  FloatLiteralExpression,
  Node,
} from 'assemblyscript';
import { docBefore } from './docs.js';

export type JsonSchema = Record<string, unknown>;

/** Arguments are read by the tool; results and events are written by it. */
export type Direction = 'in' | 'out';

/** A type the mapping cannot render, with where it was met. */
export class UnsupportedType extends Error {
  constructor(
    message: string,
    readonly range: Range | null,
  ) {
    super(message);
  }
}

const INTEGERS: Partial<Record<number, { format: string; unsigned: boolean }>> = {
  [TypeKind.I8]: { format: 'int8', unsigned: false },
  [TypeKind.I16]: { format: 'int16', unsigned: false },
  [TypeKind.I32]: { format: 'int32', unsigned: false },
  [TypeKind.I64]: { format: 'int64', unsigned: false },
  [TypeKind.Isize]: { format: 'int32', unsigned: false },
  [TypeKind.U8]: { format: 'uint8', unsigned: true },
  [TypeKind.U16]: { format: 'uint16', unsigned: true },
  [TypeKind.U32]: { format: 'uint32', unsigned: true },
  [TypeKind.U64]: { format: 'uint64', unsigned: true },
  [TypeKind.Usize]: { format: 'uint32', unsigned: true },
};

const JSON_VALUE = /\/json-as\/assembly\/index\/JSON\.Value$/;

/** What every refusal of a type says to use instead. */
const USE = 'use bool, integers, f32/f64, string, Array<T>, Map<string, T>, T | null or a @json class';

function decoratorName(d: DecoratorNode): string {
  return d.name.kind === NodeKind.Identifier ? (d.name as IdentifierExpression).text : '';
}

export function decorators(node: { decorators: DecoratorNode[] | null }): Map<string, DecoratorNode> {
  return new Map((node.decorators ?? []).map((d) => [decoratorName(d), d]));
}

/** Whether a class is serialised by json-as (`@json` or its older name `@serializable`). */
export function isJsonClass(cls: Class): boolean {
  const decl = cls.prototype.declaration as ClassDeclaration;
  const names = decorators(decl);
  return names.has('json') || names.has('serializable');
}

/** The value of a literal initializer, for `default`; undefined when it is not a plain literal. */
function literal(node: Expression | null): unknown {
  if (node === null) return undefined;
  switch (node.kind) {
    case NodeKind.True:
      return true;
    case NodeKind.False:
      return false;
    case NodeKind.Null:
      return null;
    case NodeKind.Literal: {
      const lit = node as LiteralExpression;
      if (lit.literalKind === 1 /* LiteralKind.Integer */) {
        const text = sourceText(node);
        return /^-?\d+$/.test(text) ? Number(text) : undefined;
      }
      if (lit.literalKind === 0 /* LiteralKind.Float */) return (lit as FloatLiteralExpression).value;
      if (lit.literalKind === 2 /* LiteralKind.String */) return (lit as StringLiteralExpression).value;
      return undefined;
    }
    case NodeKind.UnaryPrefix: {
      const text = sourceText(node);
      return /^-\s*\d+(\.\d+)?$/.test(text) ? Number(text.replace(/\s+/g, '')) : undefined;
    }
    default:
      return undefined;
  }
}

function sourceText(node: Node): string {
  return node.range.source.text.slice(node.range.start, node.range.end);
}

/** A type as a harness's author writes it: `string`, `Set<string>`, `Point | null`, not the compiler's internal names. */
export function typeName(program: Program, type: Type): string {
  const cls = type.classReference;
  if (!type.isReference || cls === null) return type.toString();
  const base = cls === program.stringInstance ? 'string' : cls.prototype.name;
  const args =
    cls.typeArguments && cls.typeArguments.length > 0 ? `<${cls.typeArguments.map((t) => typeName(program, t)).join(', ')}>` : '';
  return `${base}${args}${type.isNullableReference ? ' | null' : ''}`;
}

export class SchemaRenderer {
  /** Classes being rendered, outermost first: a class met again inside itself is recursion. */
  private readonly stack: Class[] = [];

  constructor(private readonly program: Program) {}

  /** The schema of `type`; throws UnsupportedType. `at` is where the type was written, for the report. */
  render(type: Type, dir: Direction, at: Range | null): JsonSchema {
    const integer = INTEGERS[type.kind];
    if (!type.isReference) {
      if (type.kind === TypeKind.Bool) return { type: 'boolean' };
      if (integer !== undefined)
        return integer.unsigned ? { type: 'integer', format: integer.format, minimum: 0 } : { type: 'integer', format: integer.format };
      if (type.kind === TypeKind.F32) return { type: 'number', format: 'float' };
      if (type.kind === TypeKind.F64) return { type: 'number', format: 'double' };
      throw new UnsupportedType(`type ${typeName(this.program, type)} has no JSON form: ${USE}`, at);
    }
    const cls = type.classReference;
    if (cls === null)
      throw new UnsupportedType(
        `type ${typeName(this.program, type)} has no JSON form (functions and host references cannot be sent): ${USE}`,
        at,
      );
    const schema = this.renderClass(cls, dir, at);
    return type.isNullableReference ? nullable(schema) : schema;
  }

  /** The arguments object of a tool: the parameter class's fields, without a title. */
  renderArguments(cls: Class, at: Range | null): JsonSchema {
    if (!isJsonClass(cls))
      throw new UnsupportedType(
        `a tool's parameter must be a @json class whose fields are its arguments; ${cls.name} is not marked @json`,
        at,
      );
    const { title: _title, description: _description, ...schema } = this.renderObject(cls, 'in', at);
    return schema;
  }

  /** The fields object of an event class. */
  renderFields(cls: Class, at: Range | null): JsonSchema {
    const { description: _description, ...schema } = this.renderObject(cls, 'out', at);
    return schema;
  }

  private renderClass(cls: Class, dir: Direction, at: Range | null): JsonSchema {
    const program = this.program;
    if (cls === program.stringInstance) return { type: 'string' };
    const proto = cls.prototype;
    const args = cls.typeArguments ?? [];
    if (proto === program.arrayPrototype) return { type: 'array', items: this.render(args[0]!, dir, at) };
    if (proto === program.mapPrototype) {
      const key = args[0]!;
      if (key.classReference !== program.stringInstance)
        throw new UnsupportedType(
          `Map<${typeName(program, key)}, ${typeName(program, args[1]!)}> has no JSON form: a map's keys must be strings (JSON object keys)`,
          at,
        );
      return { type: 'object', additionalProperties: this.render(args[1]!, dir, at) };
    }
    const name = proto.internalName;
    if (JSON_VALUE.test(name)) return {};
    if (/\/json-as\/assembly\/index\/JSON\.Obj$/.test(name)) return { type: 'object' };
    if (!isJsonClass(cls)) {
      throw new UnsupportedType(`type ${typeName(program, cls.type)} has no JSON form: ${USE}`, at);
    }
    return this.renderObject(cls, dir, at);
  }

  /** A field's schema: its type's, but for the field types json-as reads worse than it writes, in arguments. */
  private renderField(type: Type, dir: Direction, at: Range | null): JsonSchema {
    if (dir === 'in' && (type.kind === TypeKind.Isize || type.kind === TypeKind.Usize) && !type.isReference) {
      const instead = type.kind === TypeKind.Isize ? 'i32' : 'u32';
      throw new UnsupportedType(
        `an argument field cannot be ${type.toString()}: json-as skips one whose key comes out of declaration order; use ${instead}, the same on wasm32`,
        at,
      );
    }
    const cls = type.classReference;
    if (dir === 'in' && type.isReference && cls !== null && JSON_VALUE.test(cls.prototype.internalName)) {
      return type.isNullableReference ? { type: ['object', 'null'] } : { type: 'object' };
    }
    return this.render(type, dir, at);
  }

  private renderObject(cls: Class, dir: Direction, at: Range | null): JsonSchema {
    if (this.stack.includes(cls)) {
      throw new UnsupportedType(
        `class ${cls.name} contains itself (${[...this.stack.map((c) => c.name), cls.name].join(' → ')}); schemas are written inline, so a type cannot refer to itself`,
        at,
      );
    }
    this.stack.push(cls);
    try {
      const decl = cls.prototype.declaration as ClassDeclaration;
      const doc = docBefore(decl.range.source.text, decl.range.start);
      const properties: Record<string, JsonSchema> = {};
      const required: string[] = [];
      for (const field of fieldsOf(this.program, cls)) {
        const fdecl = field.prototype.fieldDeclaration as FieldDeclaration | null;
        if (fdecl === null) continue;
        const marks = decorators(fdecl);
        if (marks.has('omit')) continue;
        const key = aliasOf(marks) ?? field.name;
        const schema = this.renderField(field.type, dir, fdecl.type?.range ?? fdecl.range);
        const fieldDoc = docBefore(fdecl.range.source.text, fdecl.range.start, decl.range.start);
        const described: JsonSchema = { ...schema };
        if (fieldDoc.text) described.description = fieldDoc.text;
        if (fieldDoc.tags.has('deprecated')) described.deprecated = true;
        const initial = fdecl.initializer;
        if (dir === 'in' && initial !== null) {
          const value = literal(initial);
          if (value !== undefined) described.default = value;
        }
        properties[key] = described;
        const optional = dir === 'in' ? initial !== null : marks.has('omitnull') || marks.has('omitif');
        if (!optional) required.push(key);
      }
      const schema: JsonSchema = { type: 'object', title: cls.name };
      if (doc.text) schema.description = doc.text;
      schema.properties = properties;
      if (required.length > 0) schema.required = required;
      return schema;
    } finally {
      this.stack.pop();
    }
  }
}

function aliasOf(marks: Map<string, DecoratorNode>): string | undefined {
  const alias = marks.get('alias');
  const arg = alias?.args?.[0];
  if (arg === undefined || arg.kind !== NodeKind.Literal) return undefined;
  const lit = arg as LiteralExpression;
  return lit.literalKind === 2 ? (lit as StringLiteralExpression).value : undefined;
}

/**
 * The instance fields of `cls`, a base class's first, in declaration order. After initialisation a
 * class instance holds its fields as property prototypes; resolving one gives its type.
 */
export function fieldsOf(program: Program, cls: Class): Property[] {
  const own: Property[] = [];
  for (const member of cls.members?.values() ?? []) {
    if (member.is(CommonFlags.Static)) continue;
    if (member.kind === ElementKind.PropertyPrototype && (member as PropertyPrototype).isField) {
      const property = program.resolver.resolveProperty(member as PropertyPrototype);
      if (property !== null) own.push(property);
    } else if (member.kind === ElementKind.Property && (member as Property).isField) {
      own.push(member as Property);
    }
  }
  const base = cls.base;
  if (base === null) return own;
  const inherited = fieldsOf(program, base);
  const names = new Set(inherited.map((f) => f.name));
  return [...inherited, ...own.filter((f) => !names.has(f.name))];
}

function nullable(schema: JsonSchema): JsonSchema {
  if (typeof schema.type === 'string') return { ...schema, type: [schema.type, 'null'] };
  return { anyOf: [schema, { type: 'null' }] };
}
