/**
 * Markdown from manifests (usage, readme), which an image's author wrote and the operator has not
 * checked. markdown-it with raw HTML off escapes every tag, so `<img onerror=…>` is text; links keep
 * only http, https and mailto (anything else, `javascript:` included, stays the text it was
 * written as); and an image is drawn only from a `data:` raster URL, anything else becomes a link,
 * so rendering never loads from elsewhere. The page's Content-Security-Policy backs all of this.
 */
import MarkdownIt from 'markdown-it';

const md = new MarkdownIt({ html: false, linkify: false, typographer: false });

const LINK = /^(https?:|mailto:)/i;
const INLINE_IMAGE = /^data:image\/(png|gif|jpeg|webp);/i;

md.validateLink = (url: string): boolean => {
  const trimmed = url.trim();
  return LINK.test(trimmed) || INLINE_IMAGE.test(trimmed);
};

const renderImage = md.renderer.rules.image!;
md.renderer.rules.image = (tokens, idx, options, env, self) => {
  const token = tokens[idx]!;
  const src = String(token.attrGet('src') ?? '');
  if (INLINE_IMAGE.test(src)) return renderImage(tokens, idx, options, env, self);
  const alt = self.renderInlineAsText(token.children ?? [], options, env);
  const text = md.utils.escapeHtml(`image: ${alt || src}`);
  return LINK.test(src) ? `<a href="${md.utils.escapeHtml(src)}" rel="noopener noreferrer" target="_blank">${text}</a>` : text;
};

md.renderer.rules.link_open = (tokens, idx, options, _env, self) => {
  const token = tokens[idx]!;
  token.attrSet('rel', 'noopener noreferrer');
  token.attrSet('target', '_blank');
  return self.renderToken(tokens, idx, options);
};

/** `text` as HTML in which nothing runs and nothing loads from elsewhere. */
export function renderMarkdown(text: string): string {
  return md.render(text);
}

/** `url` if it is a web address a link may point at, else undefined (it is shown as text). */
export function safeHref(url: string): string | undefined {
  return /^https?:\/\//i.test(url.trim()) ? url.trim() : undefined;
}
