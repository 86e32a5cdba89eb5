/**
 * One pass inside its own X-Ray subsegment (Powertools Tracer docs, manual instrumentation: one
 * subsegment per pass under Lambda's segment), annotated with what it did.
 */
import type { PassSummary } from '../core/pass';
import type { Wiring } from './wiring';

/**
 * Runs `pass` in a subsegment named `name` and annotates the summary's actions and completeness.
 * @throws what `pass` throws, recorded as the subsegment's error metadata.
 */
export async function tracedPass(w: Wiring, name: string, pass: () => Promise<PassSummary>): Promise<PassSummary> {
  const { tracer } = w;
  const segment = tracer.getSegment();
  const subsegment = segment?.addNewSubsegment(name);
  if (subsegment) tracer.setSegment(subsegment);
  tracer.annotateColdStart();
  tracer.addServiceNameAnnotation();
  try {
    const summary = await pass();
    tracer.putAnnotation('actions', summary.actions.length);
    tracer.putAnnotation('readsComplete', summary.readsComplete);
    return summary;
  } catch (err) {
    tracer.addErrorAsMetadata(err as Error);
    throw err;
  } finally {
    subsegment?.close();
    if (segment) tracer.setSegment(segment);
  }
}
