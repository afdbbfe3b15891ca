/** Small pieces every view uses. */
import type { ComponentChildren } from 'preact';
import { useEffect, useId, useRef } from 'preact/hooks';
import { ApiError } from './api.js';
import { ago } from './format.js';
import { renderMarkdown } from './markdown.js';
import { href } from './router.js';

/** A time as `3 minutes ago`, with the exact time on hover and for assistive technology. */
export function When({ iso }: { iso: string | null }) {
  if (iso === null) return <span class="muted">never</span>;
  return (
    <time dateTime={iso} title={iso}>
      {ago(iso)}
    </time>
  );
}

/** Manifest Markdown, rendered by `renderMarkdown` (raw HTML off, links and images restricted). */
export function Markdown({ text }: { text: string }) {
  return <div class="markdown" dangerouslySetInnerHTML={{ __html: renderMarkdown(text) }} />;
}

/** A failed request: its stable code and message. */
export function ErrorNote({ error }: { error: unknown }) {
  const code = error instanceof ApiError ? error.code : 'error';
  const message = error instanceof Error ? error.message : String(error);
  return (
    <div class="note error" role="alert">
      <code>{code}</code> {message}
    </div>
  );
}

/** A modal question with Cancel focused first, so Enter never confirms by accident. */
export function Confirm(props: { title: string; confirm: string; onConfirm(): void; onCancel(): void; children: ComponentChildren }) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useEffect(() => {
    const dialog = ref.current;
    dialog?.showModal();
    return () => dialog?.close();
  }, []);
  return (
    <dialog
      ref={ref}
      aria-labelledby={titleId}
      onCancel={(e) => {
        e.preventDefault();
        props.onCancel();
      }}
    >
      <h2 id={titleId}>{props.title}</h2>
      {props.children}
      <div class="actions">
        <button type="button" class="secondary" autofocus onClick={props.onCancel}>
          Cancel
        </button>
        <button type="button" class="danger" onClick={props.onConfirm}>
          {props.confirm}
        </button>
      </div>
    </dialog>
  );
}

/** A name bermd neither serves nor remembers. */
export function Gone({ name }: { name: string }) {
  return (
    <div class="note" role="status">
      No harness named <code>{name}</code> is deployed. <a href={href({ view: 'list' })}>See what is</a>.
    </div>
  );
}
