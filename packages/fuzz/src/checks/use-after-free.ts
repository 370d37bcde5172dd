/** @module use_after_free: after a successful DELETE, the deleted resource (or anything under it) is gone. */
import type { CheckFn } from './types.ts';

export const useAfterFree: CheckFn = ({ request, response, history }) => {
  if (response.status >= 300 || response.status < 200) return undefined;
  const target = pathOf(request.path);
  const freed = history.find(
    (s) => s.request.method === 'DELETE' && s.response.status >= 200 && s.response.status < 300 && covers(pathOf(s.request.path), target),
  );
  if (!freed || freed.request === request) return undefined;
  return `Use after free: ${request.method} ${target} answered ${response.status} after ${freed.request.method} ${pathOf(freed.request.path)} succeeded`;
};

function pathOf(path: string): string {
  return path.split('?')[0]!;
}

function covers(deleted: string, target: string): boolean {
  return target === deleted || target.startsWith(`${deleted}/`);
}
