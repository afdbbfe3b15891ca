/**
 * The deployed harnesses, as `berm ls` lists them, and below them the names undeployed lately; the
 * page keeps both current as changes arrive. A principal without `berm:read` is told so, and sees the
 * tools it may call instead.
 */
import { SCOPE } from '@berm/protocol';
import type { HourSeries } from '../types.js';
import { deployedByText, grantsText, limitsText, shortDigest } from '../format.js';
import { usePage } from '../context.js';
import { href } from '../router.js';
import { useUndeployed } from '../undeployed.js';
import { ErrorNote, When } from '../widgets.js';
import { useFiguresSummary } from '../figures.js';
import { HourChart } from './Figures.js';
import { Image } from './History.js';
import { CallableTools } from './Tools.js';

export function List() {
  const { harnesses, principal, change } = usePage();
  const undeployed = useUndeployed(principal.mayRead());
  const figures = useFiguresSummary(change.seq, principal.mayRead());
  const hourOf = (name: string) =>
    figures.state === 'ready' ? figures.figures.harnesses.find((h) => h.name === name)?.last_hour : undefined;
  if (!principal.mayRead())
    return (
      <section aria-labelledby="list-heading">
        <h1 id="list-heading">Deployed harnesses</h1>
        <div class="note" role="status" data-unreadable>
          <strong>{principal.name}</strong> may not see the deployed harnesses: that needs the scope <code>{SCOPE.read}</code>.{' '}
          {principal.mayCallAny() ? 'It may call the tools below.' : 'It may call no tools either.'}
        </div>
        {principal.mayCallAny() ? <CallableTools /> : null}
      </section>
    );
  return (
    <>
      <section aria-labelledby="list-heading">
        <h1 id="list-heading">Deployed harnesses</h1>
        {harnesses === undefined ? (
          <p class="muted">Loading…</p>
        ) : harnesses.length === 0 ? (
          <p>
            Nothing is deployed. <a href={href({ view: 'deploy' })}>Deploy an image</a>, or run <code>crab deploy NAME IMAGE</code>.
          </p>
        ) : (
          <table class="harnesses">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Version</th>
                <th scope="col">Tools</th>
                <th scope="col">Digest</th>
                <th scope="col">Deployed</th>
                <th scope="col">Deployed by</th>
                <th scope="col">Last used</th>
                <th scope="col">Last hour</th>
                <th scope="col">Limits</th>
                <th scope="col">Grants</th>
              </tr>
            </thead>
            <tbody>
              {harnesses.map((h) => (
                <tr key={h.name} data-harness={h.name}>
                  <th scope="row" data-label="Name">
                    <a href={href({ view: 'harness', name: h.name })}>{h.name}</a>
                  </th>
                  <td data-label="Version">{h.version || '-'}</td>
                  <td data-label="Tools">{h.tools.length > 0 ? h.tools.join(', ') : '-'}</td>
                  <td data-label="Digest">
                    <code title={h.digest}>{shortDigest(h.digest)}</code>
                  </td>
                  <td data-label="Deployed">
                    <When iso={h.deployed_at} />
                  </td>
                  <td data-label="Deployed by">{deployedByText(h.deployed_by)}</td>
                  <td data-label="Last used">
                    <When iso={h.last_used_at} />
                  </td>
                  <td data-label="Last hour" data-sparkline>
                    <Sparkline series={hourOf(h.name)} />
                  </td>
                  <td data-label="Limits" title="time / memory / result size / calls at once">
                    {limitsText(h.limits)}
                  </td>
                  <td data-label="Grants">{grantsText(h.grants)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
      {undeployed.state === 'error' ? <ErrorNote error={undeployed.error} /> : null}
      {undeployed.state === 'ready' && undeployed.harnesses.length > 0 ? (
        <section aria-labelledby="undeployed-heading">
          <h2 id="undeployed-heading">Recently undeployed</h2>
          <table class="harnesses">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Undeployed</th>
                <th scope="col">Undeployed by</th>
                <th scope="col">It served</th>
              </tr>
            </thead>
            <tbody>
              {undeployed.harnesses.map((h) => (
                <tr key={h.name} data-undeployed={h.name}>
                  <th scope="row" data-label="Name">
                    <a href={href({ view: 'harness', name: h.name })}>{h.name}</a>
                  </th>
                  <td data-label="Undeployed">
                    <When iso={h.undeployed_at} />
                  </td>
                  <td data-label="Undeployed by">{deployedByText(h.undeployed_by)}</td>
                  <td data-label="It served">
                    <Image image={h.last} none="no longer kept" />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
      ) : null}
    </>
  );
}

/** A harness's calls per minute over the hour, with its total as text beside it. */
function Sparkline({ series }: { series: HourSeries | undefined }) {
  if (series === undefined) return <span class="muted">–</span>;
  const calls = series.calls.reduce((a, b) => a + b, 0);
  const errors = series.errors.reduce((a, b) => a + b, 0);
  return (
    <span class="spark">
      <HourChart series={series} small />
      <span class="hint" data-figure="hour-calls">
        {calls} {calls === 1 ? 'call' : 'calls'}
        {errors > 0 ? `, ${errors} failed` : ''}
      </span>
    </span>
  );
}
