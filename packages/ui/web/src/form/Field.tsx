/** One control per schema, recursively: each labelled, with its type and description as its hint. */
import { useId, useState } from 'preact/hooks';
import { renderSchema } from '@berm/format';
import type { JsonSchema } from '../types.js';
import { enumValues, initialValue, InvalidJson, isSchemaObject, kindOf, requiredOf, resolve, type Schema } from './schema.js';

export interface FieldProps {
  schema: unknown;
  /** The document local `$ref`s point into: the tool's arguments schema. */
  root: unknown;
  value: unknown;
  onChange(value: unknown): void;
  label: string;
  required: boolean;
  depth: number;
  seen?: readonly string[];
}

export function Field(props: FieldProps) {
  const { schema, seen } = resolve(props.schema, props.root, props.seen);
  const kind = kindOf(schema, props.depth);
  const inner = { ...props, schema, seen };
  switch (kind) {
    case 'object':
      return <ObjectField {...inner} schema={schema as Schema} />;
    case 'array':
      return <ArrayField {...inner} schema={schema as Schema} />;
    case 'enum':
      return <EnumField {...inner} schema={schema as Schema} />;
    case 'boolean':
      return <BooleanField {...inner} schema={schema as Schema} />;
    case 'number':
    case 'integer':
      return <NumberField {...inner} schema={schema as Schema} integer={kind === 'integer'} />;
    case 'string':
      return <StringField {...inner} schema={schema as Schema} />;
    default:
      return <JsonField {...inner} />;
  }
}

type TypedProps = Omit<FieldProps, 'schema'> & { schema: Schema };

/** The label's line and the hint under it: the CLI's compact type and the schema's description. */
function Label({ id, hintId, props }: { id: string; hintId: string; props: FieldProps }) {
  const description = isSchemaObject(props.schema) && typeof props.schema.description === 'string' ? props.schema.description : '';
  return (
    <>
      <label for={id}>
        {props.label}
        {props.required ? <span class="required"> (required)</span> : null}
      </label>
      <span id={hintId} class="hint">
        <code>{renderSchema(props.schema as JsonSchema, props.root as JsonSchema)}</code>
        {description ? ` ${description}` : ''}
      </span>
    </>
  );
}

function ObjectField(props: TypedProps) {
  const properties = props.schema.properties as Record<string, unknown>;
  const required = requiredOf(props.schema);
  const value = isSchemaObject(props.value) ? props.value : {};
  const set = (name: string, member: unknown) => {
    const next = { ...value, [name]: member };
    if (member === undefined) delete next[name];
    // An optional object nobody filled in is left out, rather than sent empty.
    props.onChange(!props.required && Object.keys(next).length === 0 ? undefined : next);
  };
  const members = Object.entries(properties).map(([name, schema]) => (
    <Field
      key={name}
      schema={schema}
      root={props.root}
      seen={props.seen}
      value={value[name]}
      onChange={(v) => set(name, v)}
      label={name}
      required={required.has(name)}
      depth={props.depth + 1}
    />
  ));
  if (props.depth === 0)
    return <div class="fields">{members.length > 0 ? members : <p class="muted">This tool takes no arguments.</p>}</div>;
  return (
    <fieldset class="fields">
      <legend>
        {props.label}
        {props.required ? <span class="required"> (required)</span> : null}
      </legend>
      {members}
    </fieldset>
  );
}

function ArrayField(props: TypedProps) {
  const items = Array.isArray(props.value) ? props.value : [];
  const itemSchema = props.schema.items;
  const set = (next: unknown[]) => props.onChange(next.length === 0 && !props.required ? undefined : next);
  return (
    <fieldset class="fields array">
      <legend>
        {props.label}
        {props.required ? <span class="required"> (required)</span> : null}{' '}
        <code class="hint">{renderSchema(props.schema as JsonSchema, props.root as JsonSchema)}</code>
      </legend>
      {items.map((item, i) => (
        <div class="item" key={i}>
          <Field
            schema={itemSchema}
            root={props.root}
            seen={props.seen}
            value={item}
            onChange={(v) => set(items.map((old, j) => (j === i ? v : old)))}
            label={`${props.label}[${i}]`}
            required
            depth={props.depth + 1}
          />
          <button
            type="button"
            class="secondary"
            aria-label={`Remove ${props.label}[${i}]`}
            onClick={() => set(items.filter((_, j) => j !== i))}
          >
            Remove
          </button>
        </div>
      ))}
      <button
        type="button"
        class="secondary"
        aria-label={`Add an item to ${props.label}`}
        onClick={() => set([...items, initialValue(itemSchema, props.root, props.depth + 1, props.seen)])}
      >
        Add item
      </button>
    </fieldset>
  );
}

function EnumField(props: TypedProps) {
  return <ChoiceField props={props} values={enumValues(props.schema)} unset={props.required ? '(choose one)' : '(not set)'} />;
}

/** A select among `values`, shown as JSON but for strings, with `unset` as its empty first option. */
function ChoiceField({ props, values, unset }: { props: TypedProps; values: unknown[]; unset: string }) {
  const id = useId();
  const hintId = useId();
  const index = values.findIndex((v) => JSON.stringify(v) === JSON.stringify(props.value));
  return (
    <div class="field">
      <Label id={id} hintId={hintId} props={props} />
      <select
        id={id}
        aria-describedby={hintId}
        value={index < 0 ? '' : String(index)}
        onChange={(e) => props.onChange(e.currentTarget.value === '' ? undefined : values[Number(e.currentTarget.value)])}
      >
        <option value="">{unset}</option>
        {values.map((v, i) => (
          <option key={i} value={String(i)}>
            {typeof v === 'string' ? v : JSON.stringify(v)}
          </option>
        ))}
      </select>
    </div>
  );
}

function BooleanField(props: TypedProps) {
  // Optional: "not set" is a third answer a checkbox cannot give.
  return props.required ? <CheckboxField {...props} /> : <ChoiceField props={props} values={[true, false]} unset="(not set)" />;
}

function CheckboxField(props: TypedProps) {
  const id = useId();
  const hintId = useId();
  return (
    <div class="field check">
      <input
        id={id}
        type="checkbox"
        aria-describedby={hintId}
        checked={props.value === true}
        onChange={(e) => props.onChange(e.currentTarget.checked)}
      />
      <Label id={id} hintId={hintId} props={props} />
    </div>
  );
}

function NumberField(props: TypedProps & { integer: boolean }) {
  const id = useId();
  const hintId = useId();
  const { minimum, maximum } = props.schema;
  return (
    <div class="field">
      <Label id={id} hintId={hintId} props={props} />
      <input
        id={id}
        type="number"
        inputMode={props.integer ? 'numeric' : 'decimal'}
        step={props.integer ? 1 : 'any'}
        min={typeof minimum === 'number' ? minimum : undefined}
        max={typeof maximum === 'number' ? maximum : undefined}
        aria-describedby={hintId}
        value={typeof props.value === 'number' ? String(props.value) : ''}
        onInput={(e) => {
          const text = e.currentTarget.value;
          props.onChange(text === '' ? (e.currentTarget.validity.badInput ? new InvalidJson(text) : undefined) : Number(text));
        }}
      />
    </div>
  );
}

function StringField(props: TypedProps) {
  const id = useId();
  const hintId = useId();
  const { maxLength } = props.schema;
  return (
    <div class="field">
      <Label id={id} hintId={hintId} props={props} />
      <input
        id={id}
        type="text"
        aria-describedby={hintId}
        maxLength={typeof maxLength === 'number' ? maxLength : undefined}
        value={typeof props.value === 'string' ? props.value : ''}
        onInput={(e) => props.onChange(e.currentTarget.value === '' ? undefined : e.currentTarget.value)}
      />
    </div>
  );
}

/** JSON text for what no control says; what does not parse is kept as typed and reported at send. */
export function JsonField(props: FieldProps & { rows?: number }) {
  const id = useId();
  const hintId = useId();
  const [text, setText] = useState(() =>
    props.value === undefined ? '' : props.value instanceof InvalidJson ? props.value.text : JSON.stringify(props.value, null, 2),
  );
  return (
    <div class="field">
      <Label id={id} hintId={hintId} props={props} />
      <textarea
        id={id}
        class="json"
        rows={props.rows ?? 3}
        spellcheck={false}
        aria-describedby={hintId}
        value={text}
        onInput={(e) => {
          const next = e.currentTarget.value;
          setText(next);
          if (next.trim() === '') return props.onChange(undefined);
          try {
            props.onChange(JSON.parse(next));
          } catch {
            props.onChange(new InvalidJson(next));
          }
        }}
      />
    </div>
  );
}
