/**
 * Event names: the class name in snake_case, `RainStarted` → `rain_started`, `HTTPError` →
 * `http_error`. The guest library's `eventName` (assembly/index.ts) does the same at run time, for
 * `emit`; the build's tests check the two agree.
 */
export function eventName(className: string): string {
  let out = '';
  for (let i = 0; i < className.length; i++) {
    const c = className[i]!;
    const upper = c >= 'A' && c <= 'Z';
    if (upper && i > 0) {
      const prev = className[i - 1]!;
      const next = className[i + 1] ?? '';
      const prevLowerOrDigit = (prev >= 'a' && prev <= 'z') || (prev >= '0' && prev <= '9');
      const prevUpper = prev >= 'A' && prev <= 'Z';
      const nextLower = next >= 'a' && next <= 'z';
      if (prevLowerOrDigit || (prevUpper && nextLower)) out += '_';
    }
    out += upper ? c.toLowerCase() : c;
  }
  return out;
}
