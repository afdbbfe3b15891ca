/**
 * One harness: what it is and declares, how it was used, its usage and readme, its history; roll it
 * back, undeploy it. A name undeployed lately has a page of its own (`Undeployed`). What the
 * principal may not do is greyed with the scope it needs, and its tools offered for calls only when it may call them.
 */
import { SCOPE } from '@berm/protocol';
import { useState } from 'preact/hooks';
import { isUnauthorized, undeploy } from '../api.js';
import { usePage } from '../context.js';
import { deployedByText, grantsText, limitsText } from '../format.js';
import { useHarness } from '../harness.js';
import { safeHref } from '../markdown.js';
import { href, navigate } from '../router.js';
import { Confirm, ErrorNote, Markdown, When } from '../widgets.js';
import { Declared } from './Declared.js';
import { HarnessFigures } from './Figures.js';
import { History } from './History.js';
import { Rollback } from './Rollback.js';
import { Undeployed } from './Undeployed.js';

export function Harness({ name }: { name: string }) {
  const loaded = useHarness(name);
  const { harnesses, unauthorized, principal } = usePage();
  const [confirming, setConfirming] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  if (loaded.state === 'loading') return <p class="muted">Loading {name}…</p>;
  if (loaded.state === 'gone') return <Undeployed name={name} />;
  if (loaded.state === 'error') return <ErrorNote error={loaded.error} />;
  const h = loaded.harness;
  const m = h.manifest;
  const deployed = new Set((harnesses ?? []).map((x) => x.name));

  const remove = async () => {
    setConfirming(false);
    try {
      await undeploy(name);
      navigate({ view: 'list' });
    } catch (e) {
      if (isUnauthorized(e)) unauthorized();
      setError(e);
    }
  };

  return (
    <article aria-labelledby="harness-heading">
      <h1 id="harness-heading">
        {h.name} {h.version ? <span class="version">{h.version}</span> : null}
      </h1>
      {m.description ? <p class="description">{m.description}</p> : null}
      <dl class="facts">
        <dt>Digest</dt>
        <dd>
          <code class="digest">{h.digest}</code>
        </dd>
        <dt>Deployed</dt>
        <dd>
          <When iso={h.deployed_at} />
        </dd>
        <dt>Deployed by</dt>
        <dd class="deployed-by">{deployedByText(h.deployed_by)}</dd>
        {h.source ? (
          <>
            <dt>Source</dt>
            <dd class="source">
              <code class="reference">{h.source.reference}</code> <span class="muted">manifest</span>{' '}
              <code class="source-digest">{h.source.digest}</code>
            </dd>
          </>
        ) : null}
        <dt>Last used</dt>
        <dd>
          <When iso={h.last_used_at} />
        </dd>
        <dt>Limits</dt>
        <dd>
          {limitsText(h.limits)}{' '}
          <span class="muted">
            (time / memory / result size / calls at once{Object.keys(h.bindings).length === 0 ? ', the daemon’s' : ''})
          </span>
        </dd>
        <dt>Grants</dt>
        <dd>{grantsText(h.grants)}</dd>
        {m.homepage ? <Link label="Homepage" url={m.homepage} /> : null}
        {m.repository ? <Link label="Repository" url={m.repository} /> : null}
      </dl>
      <div class="actions">
        {principal.has(SCOPE.deploy) ? (
          <a class="button secondary" href={href({ view: 'deploy', name })}>
            Deploy a new image as {name}
          </a>
        ) : (
          <button type="button" class="secondary" {...principal.gate(SCOPE.deploy)}>
            Deploy a new image as {name}
          </button>
        )}
        <button type="button" class="danger" onClick={() => setConfirming(true)} {...principal.gate(SCOPE.deploy)}>
          Undeploy {name}…
        </button>
      </div>
      {error !== undefined ? <ErrorNote error={error} /> : null}
      <HarnessFigures name={name} />
      <Rollback name={name} />
      <History name={name} />
      {m.usage ? (
        <section aria-labelledby="usage-heading">
          <h2 id="usage-heading">Usage</h2>
          <Markdown text={m.usage} />
        </section>
      ) : null}
      {principal.mayCall(name) ? null : (
        <p class="note" role="status" data-cannot-call>
          {principal.lacksCall(name)}: its tools are shown, not offered for calls.
        </p>
      )}
      <Declared manifest={m} harness={name} canTry={principal.mayCall(name)} usage={h.usage} grants={h.grants} deployed={deployed} />
      {m.readme ? (
        <section aria-labelledby="readme-heading">
          <h2 id="readme-heading">Readme</h2>
          <Markdown text={m.readme} />
        </section>
      ) : null}
      {confirming ? (
        <Confirm title={`Undeploy ${name}?`} confirm={`Undeploy ${name}`} onConfirm={remove} onCancel={() => setConfirming(false)}>
          <p>
            Its tools ({h.tools.length > 0 ? h.tools.join(', ') : 'none'}) leave <code>/mcp</code> at once, its stored image is removed, and
            the record of when its tools were last used is dropped.
          </p>
        </Confirm>
      ) : null}
    </article>
  );
}

function Link({ label, url }: { label: string; url: string }) {
  const safe = safeHref(url);
  return (
    <>
      <dt>{label}</dt>
      <dd>
        {safe === undefined ? (
          <span>{url}</span>
        ) : (
          <a href={safe} rel="noopener noreferrer" target="_blank">
            {url}
          </a>
        )}
      </dd>
    </>
  );
}
