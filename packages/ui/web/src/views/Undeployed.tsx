/**
 * The page of a name undeployed lately: when, by whom, what it served, its history, and a redeploy of
 * what it served (a rollback with no body) where a deployed harness shows its tools. A name bermd
 * neither serves nor remembers is not found.
 */
import { deployedByText } from '../format.js';
import { useUndeployed } from '../undeployed.js';
import { ErrorNote, Gone, When } from '../widgets.js';
import { History, Image } from './History.js';
import { Rollback } from './Rollback.js';

export function Undeployed({ name }: { name: string }) {
  const list = useUndeployed();
  if (list.state === 'loading') return <p class="muted">Loading {name}…</p>;
  if (list.state === 'error') return <ErrorNote error={list.error} />;
  const found = list.harnesses.find((h) => h.name === name);
  if (found === undefined) return <Gone name={name} />;
  return (
    <article aria-labelledby="harness-heading" data-undeployed-page>
      <h1 id="harness-heading">
        {name} <span class="version">undeployed</span>
      </h1>
      <p class="note" role="status">
        Undeployed <When iso={found.undeployed_at} /> by <span class="principal">{deployedByText(found.undeployed_by)}</span>.{' '}
        {found.last === null ? (
          'The store no longer keeps the image it served.'
        ) : (
          <>
            It served <Image image={found.last} />, which the store keeps.
          </>
        )}
      </p>
      <Rollback name={name} undeployed={{ last: found.last }} />
      <History name={name} />
    </article>
  );
}
