/** The page's places, in the URL's fragment so that bermd serves one file for all of them. */
import { useEffect, useState } from 'preact/hooks';

export type Route =
  | { view: 'list' }
  | { view: 'harness'; name: string }
  | { view: 'try'; name: string; tool: string }
  | { view: 'deploy'; name?: string };

export function parseRoute(hash: string): Route {
  const parts = hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodeURIComponent);
  if (parts[0] === 'harness' && parts[1] !== undefined) {
    if (parts[2] === 'try' && parts[3] !== undefined) return { view: 'try', name: parts[1], tool: parts[3] };
    return { view: 'harness', name: parts[1] };
  }
  if (parts[0] === 'deploy') return { view: 'deploy', name: parts[1] };
  return { view: 'list' };
}

export function href(route: Route): string {
  const e = encodeURIComponent;
  switch (route.view) {
    case 'list':
      return '#/';
    case 'harness':
      return `#/harness/${e(route.name)}`;
    case 'try':
      return `#/harness/${e(route.name)}/try/${e(route.tool)}`;
    case 'deploy':
      return route.name === undefined ? '#/deploy' : `#/deploy/${e(route.name)}`;
  }
}

export function navigate(route: Route): void {
  location.hash = href(route);
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    const onChange = () => setRoute(parseRoute(location.hash));
    addEventListener('hashchange', onChange);
    return () => removeEventListener('hashchange', onChange);
  }, []);
  return route;
}
