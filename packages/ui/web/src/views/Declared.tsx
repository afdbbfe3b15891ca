/**
 * What a manifest declares, as `crab inspect` lists it: each tool with its marks, signature and
 * full schema one click away; each event; the deps, with programs that are not deployed marked and
 * each syscall beside the hosts it reaches and (for a deployed harness) what the operator granted.
 */
import { href } from '../router.js';
import { eventSignature, toolSignature } from '../format.js';
import type { EventSpec, GrantSet, HarnessDetail, ManifestData, ToolSpec } from '../types.js';
import { When } from '../widgets.js';

export interface DeclaredProps {
  manifest: ManifestData;
  /** The harness's name (or the name an image would be deployed as). */
  harness?: string;
  /** Links to try each tool: for a deployed harness. */
  canTry?: boolean;
  usage?: HarnessDetail['usage'];
  grants?: GrantSet;
  /** Names deployed now; programs outside it are marked. */
  deployed?: ReadonlySet<string>;
}

export function Declared(props: DeclaredProps) {
  const { manifest } = props;
  return (
    <>
      <section aria-labelledby="tools-heading">
        <h2 id="tools-heading">Tools ({manifest.tools.length})</h2>
        {manifest.tools.length === 0 ? (
          <p class="muted">none</p>
        ) : (
          manifest.tools.map((tool) => <ToolCard key={tool.name} tool={tool} {...props} />)
        )}
      </section>
      <section aria-labelledby="events-heading">
        <h2 id="events-heading">Events ({manifest.events.length})</h2>
        {manifest.events.length === 0 ? (
          <p class="muted">none</p>
        ) : (
          manifest.events.map((event) => <Event key={event.name} event={event} {...props} />)
        )}
      </section>
      <Deps {...props} />
    </>
  );
}

function Marks({ query, deprecated }: { query?: boolean; deprecated?: boolean }) {
  return (
    <>
      {query ? <span class="mark query">query</span> : null}
      {deprecated ? <span class="mark deprecated">deprecated</span> : null}
    </>
  );
}

/** `forecast(city: string, days?: integer ≥0) -> Forecast{…}`, as `crab inspect` writes it. */
export function Signature({ tool }: { tool: ToolSpec }) {
  const { args, returns } = toolSignature(tool);
  return (
    <p class="signature">
      <code>
        {tool.name}({args}){returns === undefined ? '' : ` -> ${returns}`}
      </code>
    </p>
  );
}

/** One tool: its marks, signature and description, its last use when known, its schema, and a link to try it when `canTry`. */
export function ToolCard({ tool, harness, usage, canTry }: Pick<DeclaredProps, 'harness' | 'usage' | 'canTry'> & { tool: ToolSpec }) {
  return (
    <article class="card" aria-label={`tool ${tool.name}`}>
      <h3>
        <code>{tool.name}</code> <Marks query={tool.query} deprecated={tool.deprecated} />
      </h3>
      <Signature tool={tool} />
      {tool.description ? <p class="description">{tool.description}</p> : null}
      {usage ? (
        <p class="muted">
          Last used: <When iso={usage.tools[tool.name] ?? null} />
        </p>
      ) : null}
      <details>
        <summary>Schema of {tool.name}</summary>
        <pre class="json">
          {JSON.stringify({ arguments: tool.arguments, ...(tool.returns === undefined ? {} : { returns: tool.returns }) }, null, 2)}
        </pre>
      </details>
      {canTry && harness !== undefined ? (
        <a class="button" href={href({ view: 'try', name: harness, tool: tool.name })}>
          Try {tool.name}
        </a>
      ) : null}
    </article>
  );
}

function Event({ event, usage }: DeclaredProps & { event: EventSpec }) {
  return (
    <article class="card" aria-label={`event ${event.name}`}>
      <h3>
        <code>{event.name}</code> <Marks deprecated={event.deprecated} />
      </h3>
      <p class="signature">
        <code>
          {event.name}
          {`{${eventSignature(event)}}`}
        </code>
      </p>
      {event.description ? <p class="description">{event.description}</p> : null}
      {usage ? (
        <p class="muted">
          Last emitted: <When iso={usage.events[event.name] ?? null} />
        </p>
      ) : null}
      <details>
        <summary>Schema of {event.name}</summary>
        <pre class="json">{JSON.stringify(event.fields, null, 2)}</pre>
      </details>
    </article>
  );
}

function Deps({ manifest, grants, deployed, harness }: DeclaredProps) {
  const programs = manifest.deps?.programs ?? [];
  const syscalls = Object.entries(manifest.deps?.syscalls ?? {});
  const secrets = manifest.deps?.secrets ?? [];
  const none = programs.length === 0 && syscalls.length === 0 && secrets.length === 0;
  return (
    <section aria-labelledby="deps-heading">
      <h2 id="deps-heading">Deps</h2>
      {none ? <p class="muted">none</p> : null}
      {programs.length > 0 ? (
        <>
          <h3>Programs it calls</h3>
          <ul>
            {programs.map((p) => (
              <li key={p}>
                <code>{p}</code>{' '}
                {deployed !== undefined && p !== harness && !deployed.has(p) ? <span class="mark warn">not deployed</span> : null}
              </li>
            ))}
          </ul>
        </>
      ) : null}
      {syscalls.length > 0 ? (
        <div class="scroll">
          <table>
            <caption>Syscalls</caption>
            <thead>
              <tr>
                <th scope="col">syscall</th>
                <th scope="col">hosts it declares</th>
                {grants ? <th scope="col">granted</th> : null}
              </tr>
            </thead>
            <tbody>
              {syscalls.map(([name, hosts]) => {
                const granted = grants?.syscalls[name];
                return (
                  <tr key={name}>
                    <td>
                      <code>{name}</code>
                    </td>
                    <td>{hosts.length > 0 ? hosts.join(', ') : <span class="muted">none</span>}</td>
                    {grants ? (
                      <td>
                        {granted === undefined ? (
                          <span class="mark warn">not granted</span>
                        ) : granted.length > 0 ? (
                          granted.join(', ')
                        ) : (
                          'granted'
                        )}
                      </td>
                    ) : null}
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      ) : null}
      {secrets.length > 0 ? (
        <>
          <h3>Secrets it names</h3>
          <ul>
            {secrets.map((s) => (
              <li key={s}>
                <code>{s}</code> {grants && !grants.secrets.includes(s) ? <span class="mark warn">not granted</span> : null}
              </li>
            ))}
          </ul>
        </>
      ) : null}
    </section>
  );
}
