/**
 * Deploy an image: pick or drop it, see what it declares and what a deploy would do (a dry run:
 * every check and the compatibility gate, nothing stored), then deploy, or force past the gate
 * after a confirmation that names what will break. Without `berm:deploy` (or `berm:force` for the
 * last) the buttons are disabled, with a title naming the scope.
 */
import { HARNESS_SETTINGS, isHarnessName, type LimitName, SCOPE } from '@berm/protocol';
import { useState } from 'preact/hooks';
import { ApiError, deploy, isUnauthorized } from '../api.js';
import { usePage } from '../context.js';
import { shortDigest } from '../format.js';
import { navigate } from '../router.js';
import type { DeployOptions, DeployResult, ErrorObject } from '../types.js';
import { Confirm, ErrorNote } from '../widgets.js';
import { Breaks, withinWindow } from './Breaks.js';
import { Declared } from './Declared.js';

/** What a dry run said. */
type Check =
  | { kind: 'ok'; result: DeployResult }
  /** 409 breaks-callers; `declared` is a forced dry run's answer, for what the image declares. */
  | { kind: 'gate'; error: ErrorObject; declared: DeployResult | undefined }
  /** Any other refusal: the deploy would get the same. */
  | { kind: 'refused'; error: ApiError };

/** A harness name from a file name: `weather-1.2.wasm` as `weather-1_2`. */
function nameFromFile(file: string): string {
  return file
    .replace(/\.wasm$/i, '')
    .replace(/[^A-Za-z0-9_-]/g, '_')
    .slice(0, 64);
}

export function Deploy({ name: given }: { name?: string }) {
  const { harnesses, unauthorized, principal } = usePage();
  // A dry run is a deploy's request: without berm:deploy nothing here can be sent.
  const deploying = principal.gate(SCOPE.deploy);
  const forcing = principal.gate(SCOPE.force);
  const [name, setName] = useState(given ?? '');
  const [file, setFile] = useState<File | undefined>(undefined);
  const [limits, setLimits] = useState<Partial<Record<LimitName, string>>>({});
  const [grants, setGrants] = useState('');
  const [check, setCheck] = useState<Check | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const [confirming, setConfirming] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const [dragging, setDragging] = useState(false);

  // An empty limit is the daemon's: it is left out of the query.
  const request = (): DeployOptions => ({
    ...Object.fromEntries(HARNESS_SETTINGS.map((row) => [row.code, limits[row.harness.wire] || undefined])),
    grants: grants
      .split('\n')
      .map((g) => g.trim())
      .filter(Boolean),
  });
  const nameOk = isHarnessName(name);

  const failed = (e: unknown) => {
    if (isUnauthorized(e)) unauthorized();
    setError(e);
  };

  const dryRun = async (image: File | undefined = file, as: string = name) => {
    if (image === undefined || !isHarnessName(as)) return;
    setBusy(true);
    setError(undefined);
    setCheck(undefined);
    try {
      setCheck({ kind: 'ok', result: await deploy(as, image, { ...request(), dryRun: true }) });
    } catch (e) {
      if (!(e instanceof ApiError) || e.status === 0 || e.status === 401) failed(e);
      else if (e.code === 'breaks-callers') {
        // The refusal lists the breaks; a forced dry run (which asks for berm:force too) says what the image declares.
        const declared = forcing.disabled
          ? undefined
          : await deploy(as, image, { ...request(), dryRun: true, force: true }).catch(() => undefined);
        setCheck({ kind: 'gate', error: e.body, declared });
      } else setCheck({ kind: 'refused', error: e });
    } finally {
      setBusy(false);
    }
  };

  const choose = (picked: File | undefined) => {
    setFile(picked);
    setCheck(undefined);
    if (picked === undefined || deploying.disabled) return;
    const as = name === '' ? nameFromFile(picked.name) : name;
    setName(as);
    void dryRun(picked, as);
  };

  const doDeploy = async (force: boolean) => {
    if (file === undefined) return;
    setConfirming(false);
    setBusy(true);
    setError(undefined);
    try {
      await deploy(name, file, { ...request(), force });
      navigate({ view: 'harness', name });
    } catch (e) {
      failed(e);
    } finally {
      setBusy(false);
    }
  };

  const existing = harnesses?.find((h) => h.name === name);
  const refusing = check?.kind === 'gate' ? (check.error.breaks ?? []) : [];

  return (
    <section aria-labelledby="deploy-heading">
      <h1 id="deploy-heading">Deploy an image</h1>
      {deploying.title !== undefined ? (
        <p class="note" role="status" data-cannot-deploy>
          {deploying.title}: nothing can be deployed or checked from here.
        </p>
      ) : null}
      <form
        class={`deploy${dragging ? ' dragging' : ''}`}
        onSubmit={(e) => {
          e.preventDefault();
          void dryRun();
        }}
        onDragOver={(e) => {
          e.preventDefault();
          setDragging(true);
        }}
        onDragLeave={() => setDragging(false)}
        onDrop={(e) => {
          e.preventDefault();
          setDragging(false);
          choose(e.dataTransfer?.files[0]);
        }}
      >
        <div class="field drop">
          <label for="image">Image file (.wasm): pick one, or drop it on this form</label>
          <input
            id="image"
            type="file"
            accept=".wasm,application/wasm"
            {...deploying}
            onChange={(e) => choose(e.currentTarget.files?.[0])}
          />
        </div>
        <div class="field">
          <label for="harness-name">Harness name</label>
          <input
            id="harness-name"
            type="text"
            value={name}
            aria-describedby="harness-name-hint"
            aria-invalid={name !== '' && !nameOk}
            onInput={(e) => {
              setName(e.currentTarget.value);
              setCheck(undefined);
            }}
          />
          <span id="harness-name-hint" class="hint">
            1 to 64 letters, digits, <code>_</code> or <code>-</code>.{' '}
            {existing ? (
              <>
                Deployed now: {existing.version || 'no version'} ({shortDigest(existing.digest)}), which a deploy replaces.
              </>
            ) : null}
          </span>
        </div>
        <details>
          <summary>Limits and grants</summary>
          {HARNESS_SETTINGS.map(({ harness: { wire, title, example } }) => (
            <div class="field" key={wire}>
              <label for={`limit-${wire}`}>{title}</label>
              <input
                id={`limit-${wire}`}
                type="text"
                placeholder={example}
                value={limits[wire] ?? ''}
                aria-describedby="limits-hint"
                onInput={(e) => {
                  setLimits({ ...limits, [wire]: e.currentTarget.value });
                  setCheck(undefined);
                }}
              />
            </div>
          ))}
          <p id="limits-hint" class="hint">
            At most the daemon's; empty: the daemon's.
          </p>
          <div class="field">
            <label for="grants">Grants, one per line</label>
            <textarea
              id="grants"
              rows={3}
              aria-describedby="grants-hint"
              value={grants}
              onInput={(e) => {
                setGrants(e.currentTarget.value);
                setCheck(undefined);
              }}
            />
            <span id="grants-hint" class="hint">
              <code>syscall=NAME</code>, <code>NAME=HOST,HOST</code>, <code>secret=NAME</code> or <code>none</code>, as{' '}
              <code>crab deploy --grant</code>. Empty: everything the image declares.
            </span>
          </div>
        </details>
        <div class="actions">
          <button
            type="submit"
            class="secondary"
            title={deploying.title}
            disabled={deploying.disabled || file === undefined || !nameOk || busy}
          >
            {busy ? 'Checking…' : 'Check (dry run)'}
          </button>
          {check?.kind === 'ok' ? (
            <button type="button" disabled={busy} onClick={() => void doDeploy(false)}>
              {check.result.replaced ? `Replace ${name}` : `Deploy ${name}`}
            </button>
          ) : null}
          {check?.kind === 'gate' ? (
            <button
              type="button"
              class="danger"
              title={forcing.title}
              disabled={forcing.disabled || busy}
              onClick={() => setConfirming(true)}
            >
              Force the deploy…
            </button>
          ) : null}
        </div>
      </form>
      {error !== undefined ? <ErrorNote error={error} /> : null}
      <div aria-live="polite">{check !== undefined ? <Verdict check={check} name={name} /> : null}</div>
      {check?.kind === 'ok' || (check?.kind === 'gate' && check.declared) ? (
        <section aria-labelledby="declares-heading" class="declares">
          <h2 id="declares-heading">What the image declares</h2>
          <Declared
            manifest={(check.kind === 'ok' ? check.result : check.declared!).manifest!}
            deployed={new Set((harnesses ?? []).map((h) => h.name))}
            harness={name}
          />
        </section>
      ) : null}
      {confirming ? (
        <Confirm
          title={`Force the deploy of ${name}?`}
          confirm={`Deploy, breaking ${refusing.length} ${refusing.length === 1 ? 'use' : 'uses'}`}
          onConfirm={() => void doDeploy(true)}
          onCancel={() => setConfirming(false)}
        >
          <p>Callers used these lately, and the new image breaks them:</p>
          <Breaks breaks={refusing} />
        </Confirm>
      ) : null}
    </section>
  );
}

function Verdict({ check, name }: { check: Check; name: string }) {
  if (check.kind === 'refused') {
    const problems = check.error.body.problems ?? [];
    return (
      <section class="verdict refused" aria-labelledby="verdict-heading">
        <h2 id="verdict-heading">A deploy would be refused</h2>
        <p>
          <code>{check.error.code}</code> {check.error.message}
        </p>
        {problems.length > 1 ? (
          <ul>
            {problems.map((p, i) => (
              <li key={i}>
                <code>{p.code}</code> {p.message}
              </li>
            ))}
          </ul>
        ) : null}
      </section>
    );
  }
  if (check.kind === 'gate') {
    const { breaks = [], reported = [], window_seconds: window } = check.error;
    const within = withinWindow(window);
    return (
      <section class="verdict gate" aria-labelledby="verdict-heading">
        <h2 id="verdict-heading">A deploy would be refused: it breaks what callers used{within}</h2>
        <h3>Breaks that refuse it ({breaks.length})</h3>
        <Breaks breaks={breaks} />
        {reported.length > 0 ? (
          <>
            <h3>Breaks it would only report ({reported.length})</h3>
            <Breaks breaks={reported} />
          </>
        ) : null}
        <p>Forcing it replaces {name} anyway; those callers then get errors.</p>
      </section>
    );
  }
  const { result: answer } = check;
  const { replaced } = answer;
  return (
    <section class="verdict ok" aria-labelledby="verdict-heading">
      <h2 id="verdict-heading">
        A deploy would {replaced ? 'replace' : 'create'} {name}
        {answer.version ? ` with version ${answer.version}` : ''}
      </h2>
      <p class="muted">
        Every check passed: <code>{answer.digest}</code>
      </p>
      {answer.reported.length > 0 ? (
        <>
          <h3>Breaks it would report ({answer.reported.length})</h3>
          <Breaks breaks={answer.reported} />
        </>
      ) : replaced ? (
        <p>It breaks nothing a caller of the deployed image relies on.</p>
      ) : null}
      {answer.notices.length > 0 ? (
        <ul class="notices">
          {answer.notices.map((n, i) => (
            <li key={i}>
              <code>{n.code}</code> {n.message}
            </li>
          ))}
        </ul>
      ) : null}
    </section>
  );
}
