/**
 * @module Client-side routes under /panel/ (the server answers index.html for each of them).
 */
import { useEffect, useState } from 'preact/hooks';

export const BASE = '/panel';

export function navigate(path: string): void {
  if (window.location.pathname === BASE + path) return;
  window.history.pushState(null, '', BASE + path);
  window.dispatchEvent(new PopStateEvent('popstate'));
}

/** The path below /panel, without a trailing slash ('' for the overview). */
export function useRoute(): string {
  const [path, setPath] = useState(current);
  useEffect(() => {
    const onPop = () => setPath(current());
    window.addEventListener('popstate', onPop);
    return () => window.removeEventListener('popstate', onPop);
  }, []);
  return path;
}

function current(): string {
  const rest = window.location.pathname.startsWith(BASE) ? window.location.pathname.slice(BASE.length) : '';
  return rest.replace(/\/+$/, '');
}
