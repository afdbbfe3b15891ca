/**
 * The live figures: on a harness's page, per tool, its calls, error rate by kind, p50 and p99 over the
 * last minute and since start, and its calls and failures per minute over the hour as a chart; in the
 * list, each harness's hour as a sparkline. Every number is text; every chart says in its label what it
 * shows. Charts are inline SVG drawn with classes (the page's CSP allows no inline style).
 */
import { CALL_ERROR_KINDS } from '@berm/protocol';
import { useRef } from 'preact/hooks';
import { useChangeOf } from '../harness.js';
import { useHarnessFigures } from '../figures.js';
import type { CallErrorKind, FigureWindow, HourSeries, ToolFigures } from '../types.js';
import { ErrorNote, When } from '../widgets.js';

const KIND_TEXT: Record<CallErrorKind, string> = {
  tool_error: 'tool error',
  refused: 'refused',
  timeout: 'timeout',
  memory: 'memory',
  result_too_large: 'result too large',
  busy: 'busy',
  cancelled: 'cancelled',
  error: 'bermd error',
};

/** A duration in milliseconds as a person reads it: two or three significant digits, in ms or s. */
export function durationText(ms: number | null): string {
  if (ms === null) return '–';
  if (ms >= 1000) return `${Number((ms / 1000).toPrecision(3))} s`;
  return `${Number(ms.toPrecision(ms < 1 ? 2 : 3))} ms`;
}

function rateText(rate: number | null): string {
  return rate === null ? '–' : `${Number((rate * 100).toPrecision(3))} %`;
}

/** The failures by kind, only the kinds that occurred: `tool error 2, timeout 1`. */
function kindsText(errors: Record<CallErrorKind, number>): string {
  return CALL_ERROR_KINDS.filter((k) => errors[k] > 0)
    .map((k) => `${KIND_TEXT[k]} ${errors[k]}`)
    .join(', ');
}

/** What a chart of the hour says to assistive technology (and on hover). */
export function hourSummary(series: HourSeries): string {
  const calls = series.calls.reduce((a, b) => a + b, 0);
  const errors = series.errors.reduce((a, b) => a + b, 0);
  if (calls === 0) return 'Calls per minute over the last hour: none';
  const busiest = Math.max(...series.calls);
  return `Calls per minute over the last hour: ${calls} ${calls === 1 ? 'call' : 'calls'}, ${errors} failed, at most ${busiest} in a minute`;
}

/** Calls per minute as bars, the failed share of each in the danger colour, oldest on the left. */
export function HourChart({ series, small = false }: { series: HourSeries; small?: boolean }) {
  const width = series.calls.length * 3;
  const height = small ? 20 : 40;
  const most = Math.max(1, ...series.calls);
  const label = hourSummary(series);
  return (
    <svg
      class={small ? 'chart sparkline' : 'chart'}
      role="img"
      aria-label={label}
      viewBox={`0 0 ${width} ${height}`}
      preserveAspectRatio="none"
      data-chart
    >
      <title>{label}</title>
      <line class="axis" x1="0" y1={height - 0.5} x2={width} y2={height - 0.5} />
      {series.calls.map((n, i) => {
        if (n === 0) return null;
        const h = Math.max(1, (n / most) * (height - 1));
        const e = series.errors[i] === 0 ? 0 : Math.max(1, (series.errors[i]! / most) * (height - 1));
        return (
          <g key={i}>
            <rect class="calls" x={i * 3} y={height - 1 - h} width="2.4" height={h} />
            {e > 0 ? <rect class="errors" x={i * 3} y={height - 1 - e} width="2.4" height={e} /> : null}
          </g>
        );
      })}
    </svg>
  );
}

function WindowRow({ title, window, tip }: { title: string; window: FigureWindow; tip: string }) {
  const kinds = kindsText(window.errors);
  return (
    <tr data-window={title === 'Last minute' ? 'last_minute' : 'since_start'}>
      <th scope="row">{title}</th>
      <td data-figure="calls">{window.calls}</td>
      <td data-figure="error_rate">
        {rateText(window.error_rate)}
        {kinds === '' ? null : (
          <span class="muted kinds" data-figure="kinds">
            {' '}
            ({kinds})
          </span>
        )}
      </td>
      <td data-figure="p50" title={tip}>
        {durationText(window.p50_ms)}
      </td>
      <td data-figure="p99" title={tip}>
        {durationText(window.p99_ms)}
      </td>
    </tr>
  );
}

function ToolFiguresCard({ tool, tip }: { tool: ToolFigures; tip: string }) {
  const id = `figures-${tool.name}`;
  return (
    <div class="figures-tool" data-figures-tool={tool.name}>
      <h3 id={id}>{tool.name}</h3>
      <div class="figures-body">
        <table class="figures" aria-labelledby={id}>
          <thead>
            <tr>
              <td />
              <th scope="col">Calls</th>
              <th scope="col">Error rate</th>
              <th scope="col" title={tip}>
                p50
              </th>
              <th scope="col" title={tip}>
                p99
              </th>
            </tr>
          </thead>
          <tbody>
            <WindowRow title="Last minute" window={tool.last_minute} tip={tip} />
            <WindowRow title="Since start" window={tool.since_start} tip={tip} />
          </tbody>
        </table>
        <figure class="hour">
          <HourChart series={tool.last_hour} />
          <figcaption class="hint">Calls per minute over the hour, now on the right; failed in red</figcaption>
        </figure>
      </div>
    </div>
  );
}

/** A harness's live figures, per tool, kept current from `GET /figures/events`. */
export function HarnessFigures({ name }: { name: string }) {
  // Read again when the harness is replaced: its tools may be others.
  const change = useChangeOf(name);
  // -1 is another harness's change: the last of this one's stands.
  const generation = useRef(0);
  if (change >= 0) generation.current = change;
  const loaded = useHarnessFigures(name, generation.current);
  if (loaded.state === 'loading') return null;
  if (loaded.state === 'error') return <ErrorNote error={loaded.error} />;
  const f = loaded.figures;
  const error = `${Number((f.percentile_error * 100).toPrecision(2))} %`;
  const tip = `An estimate from a histogram of the calls' durations (waiting for a worker and running): within ${error} of a duration some call took. Calls refused or turned away busy have none.`;
  return (
    <section aria-labelledby="figures-heading" data-figures>
      <h2 id="figures-heading">Calls</h2>
      <p class="hint">
        Counted by this bermd since <When iso={f.since} />; the last minute is the last 50 to 60 seconds. p50 and p99 are estimates within{' '}
        {error}.
      </p>
      {f.tools.length === 0 ? <p class="muted">It has no tools.</p> : null}
      {f.tools.map((tool) => (
        <ToolFiguresCard key={tool.name} tool={tool} tip={tip} />
      ))}
    </section>
  );
}
