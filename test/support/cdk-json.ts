/**
 * The feature flags `cdk.json` pins, so that tests synthesizing in-process build the template
 * `cdk synth` / `cdk deploy` build (the CLI reads `cdk.json`'s context; `new App()` alone does not).
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const CDK_JSON = fileURLToPath(new URL('../../cdk.json', import.meta.url));

/** `cdk.json`'s `context` (feature flags and `cli-telemetry`), as the CDK CLI passes it to the app. */
export function cdkJsonContext(): Record<string, unknown> {
  return (JSON.parse(readFileSync(CDK_JSON, 'utf8')) as { context: Record<string, unknown> }).context;
}
