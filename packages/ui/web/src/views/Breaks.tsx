/** Breaks as the gate answers them (a dry run's, a refusal's, a history entry's), each with the last use of what it breaks. */
import { describeDuration, SECOND_MS } from '@berm/protocol';
import type { GatedBreak } from '../types.js';
import { When } from '../widgets.js';

export function Breaks({ breaks }: { breaks: GatedBreak[] }) {
  return (
    <ul class="breaks">
      {breaks.map((b, i) => (
        <li key={i}>
          <span>
            {b.tool !== undefined ? 'tool' : 'event'} <code>{b.tool ?? b.event}</code>: {b.message}
          </span>{' '}
          <span class="muted">
            (<code>{b.code}</code>
            {b.path ? (
              <>
                {' '}
                at <code>{b.path}</code>
              </>
            ) : null}
            ; last used <When iso={b.last_used_at} />)
          </span>
        </li>
      ))}
    </ul>
  );
}

/** ` in the last 30 days`: the gate's window, as a refusal says it; empty when the answer gave none. */
export function withinWindow(seconds: number | undefined): string {
  return seconds === undefined ? '' : ` in the last ${describeDuration(seconds * SECOND_MS)}`;
}
