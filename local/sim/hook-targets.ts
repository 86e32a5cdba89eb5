/**
 * Lifecycle hook targets as a test or scenario supplies them: a local function, scripted answers,
 * or an HTTP endpoint (the payload POSTed as JSON, the answer read as JSON).
 */
import type { HookTarget } from './native-deployments';
import type { HookAnswer } from './state';

/** The function a supplied target stands for. */
export function hookTargetOf(target: HookTarget | { answers: HookAnswer[] } | { url: string }): HookTarget {
  if (typeof target === 'function') return target;
  if ('answers' in target) {
    const answers = target.answers.map((a) => ({ ...a }));
    let n = 0;
    return () => {
      if (answers.length === 0) return { hookStatus: 'SUCCEEDED' };
      return answers[Math.min(n++, answers.length - 1)];
    };
  }
  const url = target.url;
  return async (payload) => {
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(payload) });
    if (!res.ok) throw new Error(`the hook endpoint answered HTTP ${res.status}`);
    return (await res.json()) as HookAnswer;
  };
}
