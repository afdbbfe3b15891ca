/**
 * Rolling a harness back to an image the store keeps, or bringing back what an undeployed name served.
 * Pressing the button runs the dry run and shows its verdict (what would be served, the breaks the gate
 * reports, or the breaks that refuse it); confirming runs the rollback of the image the verdict named,
 * so that a change made meanwhile by someone else never turns it into a rollback to another image.
 * Without `berm:deploy` the control is disabled and says why; forcing past a refusal is offered only
 * with `berm:force`.
 */
import { SCOPE } from '@berm/protocol';
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ApiError, isUnauthorized, retainedImages, rollback } from '../api.js';
import { usePage } from '../context.js';
import { ago, shortDigest } from '../format.js';
import { useChangeOf } from '../harness.js';
import type { DeployResult, ErrorObject, HistoryImage, RetainedImages, RollbackRequest } from '../types.js';
import { ErrorNote } from '../widgets.js';
import { Breaks, withinWindow } from './Breaks.js';
import { Image } from './History.js';

/** What the dry run said: a rollback would go through, or the gate refuses it (409 `breaks-callers`). */
type Check = { kind: 'ok'; result: DeployResult } | { kind: 'gate'; error: ErrorObject };

/** The option of the select that means one step back (`{"steps": 1}`) rather than an image by digest. */
const PREVIOUS = '';

const versionOf = (image: HistoryImage) => image.version || shortDigest(image.digest);

/**
 * `undeployed` for a name undeployed lately: its last image (null when no longer kept), which a
 * rollback with no body brings back. Without it, the name is deployed and its kept images are listed.
 */
export function Rollback({ name, undeployed }: { name: string; undeployed?: { last: HistoryImage | null } }) {
  const { principal, unauthorized, change } = usePage();
  const deploying = principal.gate(SCOPE.deploy);
  const generation = useChangeOf(name);
  const [images, setImages] = useState<RetainedImages | undefined>(undefined);
  const [choice, setChoice] = useState(PREVIOUS);
  const [check, setCheck] = useState<Check | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);

  const failed = (e: unknown) => {
    if (isUnauthorized(e)) unauthorized();
    setError(e);
  };

  // The name changed: a verdict shown about what it served before no longer holds. (A reconnection
  // alone keeps it: the rollback it leads to names its image, which a missed change cannot swap.)
  useEffect(() => {
    if (change.message?.name === name) setCheck(undefined);
  }, [change.seq]);

  useEffect(() => {
    if (generation < 0 || undeployed !== undefined) return;
    let current = true;
    retainedImages(name).then(
      (kept) => current && setImages(kept),
      (e: unknown) => current && failed(e),
    );
    return () => {
      current = false;
    };
  }, [name, generation]);

  const retained = images?.retained ?? [];
  const target: HistoryImage | null | undefined =
    undeployed !== undefined ? undeployed.last : choice === PREVIOUS ? retained[0] : retained.find((r) => r.digest === choice);
  const request: RollbackRequest = undeployed !== undefined ? {} : choice === PREVIOUS ? { steps: 1 } : { to: choice };

  const dryRun = async () => {
    setBusy(true);
    setError(undefined);
    setCheck(undefined);
    try {
      setCheck({ kind: 'ok', result: await rollback(name, request, { dryRun: true }) });
    } catch (e) {
      if (e instanceof ApiError && e.code === 'breaks-callers') setCheck({ kind: 'gate', error: e.body });
      else failed(e);
    } finally {
      setBusy(false);
    }
  };

  const run = async (to: RollbackRequest, force: boolean) => {
    setBusy(true);
    setError(undefined);
    try {
      await rollback(name, to, { force });
      // The page hears of the change from `/events`, and shows the new state then.
      setCheck(undefined);
    } catch (e) {
      failed(e);
    } finally {
      setBusy(false);
    }
  };

  const cancel = () => setCheck(undefined);
  const verb = undeployed !== undefined ? 'redeploy' : 'rollback';

  let control: ComponentChildren;
  if (undeployed !== undefined) {
    control =
      undeployed.last === null ? (
        <p class="note" role="status">
          The store no longer keeps the image {name} served: deploy one as {name} to serve it again.
        </p>
      ) : (
        <div class="actions">
          <button type="button" title={deploying.title} disabled={deploying.disabled || busy} onClick={() => void dryRun()}>
            {busy && check === undefined ? 'Checking…' : 'Redeploy what it served…'}
          </button>
        </div>
      );
  } else if (images === undefined) {
    control = error === undefined ? <p class="muted">Loading the kept images…</p> : null;
  } else if (retained.length === 0) {
    control = (
      <p class="muted" data-nothing-kept>
        No earlier image of {name} is kept: there is nothing to roll back to.
      </p>
    );
  } else {
    control = (
      <form
        class="rollback"
        onSubmit={(e) => {
          e.preventDefault();
          void dryRun();
        }}
      >
        <div class="field">
          <label for="rollback-to">Roll back to</label>
          <select
            id="rollback-to"
            value={choice}
            disabled={deploying.disabled}
            onChange={(e) => {
              setChoice(e.currentTarget.value);
              setCheck(undefined);
            }}
          >
            <option value={PREVIOUS}>
              The previous image ({versionOf(retained[0]!)}, {shortDigest(retained[0]!.digest)})
            </option>
            {retained.map((r) => (
              <option key={r.digest} value={r.digest}>
                {r.version || 'no version'} · {shortDigest(r.digest)} · retained {ago(r.retained_at)}
              </option>
            ))}
          </select>
        </div>
        <div class="actions">
          <button type="submit" class="secondary" title={deploying.title} disabled={deploying.disabled || busy}>
            {busy && check === undefined ? 'Checking…' : 'Roll back…'}
          </button>
        </div>
      </form>
    );
  }

  return (
    <section aria-labelledby="rollback-heading">
      <h2 id="rollback-heading">{undeployed !== undefined ? 'Redeploy' : 'Roll back'}</h2>
      {deploying.title !== undefined ? (
        <p class="hint" data-cannot-rollback>
          {deploying.title}: nothing can be rolled back from here.
        </p>
      ) : null}
      {control}
      {error !== undefined ? <ErrorNote error={error} /> : null}
      <div aria-live="polite">
        {check?.kind === 'ok' ? (
          <section class="verdict ok" aria-labelledby="rollback-verdict">
            <h3 id="rollback-verdict">
              A {verb} would serve {name} {versionOf(check.result)} ({shortDigest(check.result.digest)})
              {undeployed !== undefined ? ' again' : ''}
            </h3>
            {images?.current ? (
              <p>
                In place of <Image image={images.current} />.
              </p>
            ) : null}
            {check.result.reported.length > 0 ? (
              <>
                <h4>Breaks it would report ({check.result.reported.length})</h4>
                <Breaks breaks={check.result.reported} />
              </>
            ) : check.result.replaced ? (
              <p>It breaks nothing a caller of the served image relies on.</p>
            ) : null}
            {check.result.notices.length > 0 ? (
              <ul class="notices">
                {check.result.notices.map((n, i) => (
                  <li key={i}>
                    <code>{n.code}</code> {n.message}
                  </li>
                ))}
              </ul>
            ) : null}
            <div class="actions">
              <button type="button" disabled={busy} onClick={() => void run({ to: check.result.digest }, false)}>
                {undeployed !== undefined ? `Redeploy ${name}` : `Roll back to ${versionOf(check.result)}`}
              </button>
              <button type="button" class="secondary" onClick={cancel}>
                Cancel
              </button>
            </div>
          </section>
        ) : null}
        {check?.kind === 'gate' ? (
          <section class="verdict gate" aria-labelledby="rollback-verdict">
            <h3 id="rollback-verdict">
              A {verb} would be refused: it breaks what callers used{withinWindow(check.error.window_seconds)}
            </h3>
            <h4>Breaks that refuse it ({check.error.breaks?.length ?? 0})</h4>
            <Breaks breaks={check.error.breaks ?? []} />
            {(check.error.reported?.length ?? 0) > 0 ? (
              <>
                <h4>Breaks it would only report ({check.error.reported!.length})</h4>
                <Breaks breaks={check.error.reported!} />
              </>
            ) : null}
            {principal.has(SCOPE.force) ? (
              <p>Forcing it serves {target ? versionOf(target) : 'that image'} anyway; those callers then get errors.</p>
            ) : (
              <p class="hint" data-cannot-force>
                {principal.lacks(SCOPE.force)}: the {verb} cannot be forced from here.
              </p>
            )}
            <div class="actions">
              {principal.has(SCOPE.force) ? (
                <button
                  type="button"
                  class="danger"
                  disabled={busy}
                  onClick={() => void run(target ? { to: target.digest } : request, true)}
                >
                  Roll back anyway (force)
                </button>
              ) : null}
              <button type="button" class="secondary" onClick={cancel}>
                Cancel
              </button>
            </div>
          </section>
        ) : null}
      </div>
    </section>
  );
}
