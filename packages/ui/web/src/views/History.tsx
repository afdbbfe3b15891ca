/**
 * A harness's history as a timeline, newest first: what changed (deployed, rolled back, undeployed;
 * the image before and after), who, when, through which replica, and what the change was forced
 * past, marked. "Older" reads the next page; a change of the name reads the first page again.
 */
import { useEffect, useState } from 'preact/hooks';
import { history, isUnauthorized } from '../api.js';
import { usePage } from '../context.js';
import { deployedByText, shortDigest } from '../format.js';
import { useChangeOf } from '../harness.js';
import type { HistoryAction, HistoryEntry, HistoryImage } from '../types.js';
import { ErrorNote, When } from '../widgets.js';
import { Breaks } from './Breaks.js';

/** Entries a page shows at first and adds per "Older": the latest few, without pushing the tools far down. */
const PAGE = 5;

const ACTION: Record<HistoryAction, string> = { deploy: 'Deployed', rollback: 'Rolled back', undeploy: 'Undeployed' };

interface Timeline {
  entries: HistoryEntry[];
  next: string | null;
}

export function History({ name }: { name: string }) {
  const { unauthorized } = usePage();
  const generation = useChangeOf(name);
  const [timeline, setTimeline] = useState<Timeline | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  const [busy, setBusy] = useState(false);

  const failed = (e: unknown) => {
    if (isUnauthorized(e)) unauthorized();
    setError(e);
  };

  useEffect(() => {
    if (generation < 0) return;
    let current = true;
    history(name, undefined, PAGE).then(
      (page) => {
        if (!current) return;
        setTimeline({ entries: page.entries, next: page.next_cursor });
        setError(undefined);
      },
      (e: unknown) => current && failed(e),
    );
    return () => {
      current = false;
    };
  }, [name, generation]);

  const older = async () => {
    if (timeline?.next == null) return;
    setBusy(true);
    try {
      const page = await history(name, timeline.next, PAGE);
      setTimeline({ entries: [...timeline.entries, ...page.entries], next: page.next_cursor });
    } catch (e) {
      failed(e);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section aria-labelledby="history-heading">
      <h2 id="history-heading">History</h2>
      {error !== undefined ? <ErrorNote error={error} /> : null}
      {timeline === undefined ? (
        error === undefined ? (
          <p class="muted">Loading…</p>
        ) : null
      ) : timeline.entries.length === 0 ? (
        <p class="muted">Nothing recorded: the history starts with the first deploy bermd answers.</p>
      ) : (
        <ol class="timeline">
          {timeline.entries.map((e) => (
            <Entry key={`${e.at}/${e.action}/${e.to?.digest ?? ''}`} entry={e} />
          ))}
        </ol>
      )}
      {timeline?.next != null ? (
        <button type="button" class="secondary small" disabled={busy} onClick={() => void older()}>
          {busy ? 'Loading…' : 'Older'}
        </button>
      ) : null}
    </section>
  );
}

function Entry({ entry: e }: { entry: HistoryEntry }) {
  const forcedPast = e.forced_past.length;
  const others = e.reported.length - forcedPast;
  return (
    <li class={`${e.action}${forcedPast > 0 ? ' forced' : ''}`} data-action={e.action}>
      <div class="change">
        <strong>{ACTION[e.action]}</strong>
        {e.forced ? (
          <>
            {' '}
            <span class="mark forced">forced</span>
          </>
        ) : null}{' '}
        <Image image={e.from} /> → <Image image={e.to} />
      </div>
      <div class="meta">
        <When iso={e.at} /> by <span class="principal">{deployedByText(e.principal)}</span> on <span class="replica">{e.replica}</span>
        {others > 0 ? <span> · {plural(others, 'break')} reported</span> : null}
      </div>
      {e.source ? (
        <div class="source">
          from <code class="reference">{e.source.reference}</code>{' '}
          <code class="source-digest" title={e.source.digest}>
            {shortDigest(e.source.digest)}
          </code>
        </div>
      ) : null}
      {forcedPast > 0 ? (
        <div class="forced-past">
          <strong>Forced past {plural(forcedPast, 'break')} that refused it:</strong>
          <Breaks breaks={e.forced_past} />
        </div>
      ) : null}
      {e.notices.length > 0 ? (
        <details>
          <summary>{plural(e.notices.length, 'notice')}</summary>
          <ul class="notices">
            {e.notices.map((n, i) => (
              <li key={i}>
                <code>{n.code}</code> {n.message}
              </li>
            ))}
          </ul>
        </details>
      ) : null}
    </li>
  );
}

/** An image as history names it: its version and short digest (the whole digest on hover); `none` when there is none. */
export function Image({ image, none = 'nothing' }: { image: HistoryImage | null; none?: string }) {
  if (image === null) return <span class="muted">{none}</span>;
  return (
    <span class="image">
      {image.version === null ? <span class="muted">unknown version</span> : image.version || <span class="muted">no version</span>}{' '}
      <code title={image.digest}>{shortDigest(image.digest)}</code>
    </span>
  );
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
