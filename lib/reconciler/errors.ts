/** The error every prop check of `EcsReconciler` throws. */

/** Thrown by the `EcsReconciler` constructor; one sentence per problem, saying what to change. */
export class EcsReconcilerPropsError extends Error {
  constructor(readonly problems: string[]) {
    super(problems.join(' '));
    this.name = 'EcsReconcilerPropsError';
  }
}
