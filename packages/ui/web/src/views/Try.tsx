/**
 * Try a tool: a form drawn from its arguments schema (or JSON), checked here before it is sent,
 * then sent through `/mcp` as any MCP client would; the answer shows as a result, Failed or
 * Refused, with the events the call emitted. Only a tool of a harness the principal may call is offered;
 * one without `berm:read` finds the tool in what `/mcp` lists it.
 */
import { useEffect, useState } from 'preact/hooks';
import { isUnauthorized } from '../api.js';
import { usePage } from '../context.js';
import { Field, JsonField } from '../form/Field.js';
import { initialValue, invalidJsonAt } from '../form/schema.js';
import { useHarness } from '../harness.js';
import { mcp, specOf, type CallOutcome } from '../mcp.js';
import { href } from '../router.js';
import type { HarnessDetail, ToolSpec } from '../types.js';
import { check, type Problem } from '../validate.js';
import { ErrorNote, Gone } from '../widgets.js';
import { Signature } from './Declared.js';
import { useCallableTools } from './Tools.js';

export function Try({ name, tool }: { name: string; tool: string }) {
  const { principal } = usePage();
  if (!principal.mayCall(name))
    return (
      <div class="note" role="status" data-cannot-call>
        {principal.lacksCall(name)}. <a href={href({ view: 'list' })}>See what it may do</a>.
      </div>
    );
  return principal.mayRead() ? <TryDeployed name={name} tool={tool} /> : <TryListed name={name} tool={tool} />;
}

/** A tool of a harness the control API shows the principal. */
function TryDeployed({ name, tool }: { name: string; tool: string }) {
  const loaded = useHarness(name);
  // Kept when the harness goes away under the form: the call can still be sent, and bermd refuses it.
  const [seen, setSeen] = useState<HarnessDetail | undefined>(undefined);
  useEffect(() => {
    if (loaded.state === 'ready') setSeen(loaded.harness);
  }, [loaded]);
  const harness = loaded.state === 'ready' ? loaded.harness : seen;
  if (harness === undefined) {
    if (loaded.state === 'gone') return <Gone name={name} />;
    if (loaded.state === 'error') return <ErrorNote error={loaded.error} />;
    return <p class="muted">Loading {name}…</p>;
  }
  const spec = harness.manifest.tools.find((t) => t.name === tool);
  if (spec === undefined) {
    return (
      <div class="note" role="status">
        <code>{name}</code> has no tool named <code>{tool}</code>. <a href={href({ view: 'harness', name })}>See its tools</a>.
      </div>
    );
  }
  return <TryForm key={`${name}/${tool}`} harness={name} spec={spec} gone={loaded.state === 'gone'} />;
}

/** A tool as `/mcp` lists it, for a principal that may call it but not read the control API. */
function TryListed({ name, tool }: { name: string; tool: string }) {
  const listed = useCallableTools();
  if (listed.state === 'loading') return <p class="muted">Loading {name}…</p>;
  if (listed.state === 'error') return <ErrorNote error={listed.error} />;
  const found = listed.tools.find((t) => t._meta?.['berm/harness'] === name && t._meta?.['berm/tool'] === tool);
  if (found === undefined)
    return (
      <div class="note" role="status">
        <code>/mcp</code> lists no tool <code>{tool}</code> of <code>{name}</code>.{' '}
        <a href={href({ view: 'list' })}>See the tools you may call</a>.
      </div>
    );
  return <TryForm key={`${name}/${tool}`} harness={name} spec={specOf(found)} gone={false} />;
}

type Sent = { state: 'idle' } | { state: 'sending' } | { state: 'done'; outcome: CallOutcome } | { state: 'error'; error: unknown };

function TryForm({ harness, spec, gone }: { harness: string; spec: ToolSpec; gone: boolean }) {
  const { unauthorized } = usePage();
  const schema = spec.arguments;
  const [value, setValue] = useState<unknown>(() => initialValue(schema, schema) ?? {});
  const [mode, setMode] = useState<'form' | 'json'>('form');
  const [checkHere, setCheckHere] = useState(true);
  const [problems, setProblems] = useState<Problem[]>([]);
  const [sent, setSent] = useState<Sent>({ state: 'idle' });
  // Switching modes redraws the editor from the value, so each starts from what the other held.
  const [generation, setGeneration] = useState(0);

  const submit = async (e: Event) => {
    e.preventDefault();
    const notJson = invalidJsonAt(value).map((path) => ({ path, message: 'This is not JSON.' }));
    const found = notJson.length > 0 ? notJson : checkHere ? check(schema, value ?? {}) : [];
    setProblems(found);
    if (found.length > 0) return;
    setSent({ state: 'sending' });
    try {
      setSent({ state: 'done', outcome: await mcp.callTool(harness, spec.name, value ?? {}) });
    } catch (error) {
      if (isUnauthorized(error)) unauthorized();
      setSent({ state: 'error', error });
    }
  };

  return (
    <article aria-labelledby="try-heading">
      <p class="crumbs">
        <a href={href({ view: 'harness', name: harness })}>{harness}</a> /
      </p>
      <h1 id="try-heading">Try {spec.name}</h1>
      <Signature tool={spec} />
      {spec.description ? <p class="description">{spec.description}</p> : null}
      {gone ? (
        <div class="note warn" role="status">
          <code>{harness}</code> is no longer deployed: bermd will refuse a call to it.
        </div>
      ) : null}
      <form class="try" onSubmit={submit} noValidate>
        <fieldset class="modes">
          <legend>Edit the arguments as</legend>
          {(['form', 'json'] as const).map((m) => (
            <label key={m}>
              <input
                type="radio"
                name="mode"
                value={m}
                checked={mode === m}
                onChange={() => {
                  setMode(m);
                  setGeneration((g) => g + 1);
                }}
              />
              {m === 'form' ? 'a form' : 'JSON'}
            </label>
          ))}
        </fieldset>
        {mode === 'form' ? (
          <Field key={generation} schema={schema} root={schema} value={value} onChange={setValue} label="arguments" required depth={0} />
        ) : (
          <JsonField
            key={generation}
            schema={schema}
            root={schema}
            value={value ?? {}}
            onChange={setValue}
            label="Arguments (JSON)"
            required
            depth={0}
            rows={8}
          />
        )}
        <div class="field check">
          <input id="check-here" type="checkbox" checked={checkHere} onChange={(e) => setCheckHere(e.currentTarget.checked)} />
          <label for="check-here">Check the arguments against the schema here before sending (bermd checks them again either way)</label>
        </div>
        {problems.length > 0 ? (
          <div class="note error" role="alert" aria-label="Problems with the arguments">
            <p>Not sent: the arguments do not match the schema.</p>
            <ul>
              {problems.map((p, i) => (
                <li key={i}>
                  <code>{p.path || '/'}</code> {p.message}
                </li>
              ))}
            </ul>
          </div>
        ) : null}
        <div class="actions">
          <button type="submit" disabled={sent.state === 'sending'}>
            {sent.state === 'sending' ? 'Calling…' : `Call ${spec.name}`}
          </button>
        </div>
      </form>
      <div aria-live="polite">
        {sent.state === 'done' ? <Outcome outcome={sent.outcome} /> : null}
        {sent.state === 'error' ? <ErrorNote error={sent.error} /> : null}
      </div>
    </article>
  );
}

const HEADINGS: Record<CallOutcome['kind'], string> = { result: 'Result', failed: 'Failed', refused: 'Refused' };
const MEANING: Record<CallOutcome['kind'], string> = {
  result: 'The tool ran and answered.',
  failed: 'The tool ran and failed.',
  refused: 'Nothing ran: bermd refused the call.',
};

function Outcome({ outcome }: { outcome: CallOutcome }) {
  return (
    <section class={`outcome ${outcome.kind}`} aria-labelledby="outcome-heading" data-outcome={outcome.kind}>
      <h2 id="outcome-heading">
        {HEADINGS[outcome.kind]}
        {outcome.kind === 'result' ? null : <code class="code">{outcome.code}</code>}
      </h2>
      <p class="muted">
        {MEANING[outcome.kind]}
        {outcome.kind === 'refused' && outcome.path !== undefined ? ` At ${outcome.path || '/'} of the arguments.` : ''}
      </p>
      <pre class="json">{outcome.kind === 'result' ? JSON.stringify(outcome.value, null, 2) : outcome.message}</pre>
      <h3>Events it emitted ({outcome.events.length})</h3>
      {outcome.events.length === 0 ? (
        <p class="muted">none</p>
      ) : (
        <ul class="events">
          {outcome.events.map((e, i) => (
            <li key={i}>
              <code>{e.event}</code> <span class="muted">from {e.tool}</span>
              <pre class="json">{JSON.stringify(e.fields, null, 2)}</pre>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
