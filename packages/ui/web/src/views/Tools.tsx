/**
 * The tools the principal may call, as `/mcp` lists them: what the page shows a principal without
 * `berm:read`, which cannot read the control API but may call some harness's tools.
 */
import { useEffect, useState } from 'preact/hooks';
import { isUnauthorized } from '../api.js';
import { usePage } from '../context.js';
import { type ListedTool, mcp, specOf } from '../mcp.js';
import { ErrorNote } from '../widgets.js';
import { ToolCard } from './Declared.js';

type Listed = { state: 'loading' } | { state: 'ready'; tools: ListedTool[] } | { state: 'error'; error: unknown };

/** The tools `/mcp` lists to the principal, of the harnesses it may call. */
export function useCallableTools(): Listed {
  const { principal, unauthorized } = usePage();
  const [listed, setListed] = useState<Listed>({ state: 'loading' });
  useEffect(() => {
    let current = true;
    mcp.listTools().then(
      (tools) => {
        const mine = tools.filter((t) => principal.mayCall(t._meta?.['berm/harness'] ?? ''));
        if (current) setListed({ state: 'ready', tools: mine });
      },
      (error: unknown) => {
        if (isUnauthorized(error)) unauthorized();
        if (current) setListed({ state: 'error', error });
      },
    );
    return () => {
      current = false;
    };
  }, []);
  return listed;
}

export function CallableTools() {
  const listed = useCallableTools();
  if (listed.state === 'loading') return <p class="muted">Loading the tools you may call…</p>;
  if (listed.state === 'error') return <ErrorNote error={listed.error} />;
  const byHarness = new Map<string, ListedTool[]>();
  for (const tool of listed.tools) {
    const harness = tool._meta?.['berm/harness'] ?? '';
    byHarness.set(harness, [...(byHarness.get(harness) ?? []), tool]);
  }
  return (
    <section aria-labelledby="callable-heading">
      <h2 id="callable-heading">Tools you may call</h2>
      {byHarness.size === 0 ? <p>None is deployed now.</p> : null}
      {[...byHarness].map(([harness, tools]) => (
        <section key={harness} aria-label={`harness ${harness}`} data-callable={harness}>
          <h3>{harness}</h3>
          {tools.map((tool) => (
            <ToolCard key={tool.name} tool={specOf(tool)} harness={harness} canTry />
          ))}
        </section>
      ))}
    </section>
  );
}
