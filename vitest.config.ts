import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { buildCli, isStale } from './scripts/build-cli.mjs';
import { detectTools, MissingToolsReporter, TOOL_TAGS } from './test/support/tools-setup.ts';

// Once per run, before any test file loads:
// - the CLI is built (dist/, scripts/build-cli.mjs) if a source changed, so that the tests that
//   spawn `node bin/ecsr.js` run the build and none of them pays for building it;
// - outside tools (moto, the AWS CLI, cfn-lint, chromium) are found and handed to the test files
//   (`needs()` in test/support/tools.ts) and to the reporter that names what was skipped.
export default defineConfig(async () => {
  const [tools] = await Promise.all([detectTools(), isStale() ? buildCli() : undefined]);
  return {
    // The package's own name, as lib/app.ts imports it: the sources, as tsconfig.json's `paths` says.
    resolve: {
      alias: [
        { find: /^ecs-reconciler$/, replacement: fileURLToPath(new URL('./lib/index.ts', import.meta.url)) },
        { find: /^ecs-reconciler\/spec$/, replacement: fileURLToPath(new URL('./lib/spec.ts', import.meta.url)) },
      ],
    },
    test: {
      include: ['test/**/*.test.ts'],
      testTimeout: 60_000,
      hookTimeout: 60_000,
      // Two cores here and in CI: keep file-level parallelism modest so that servers started by
      // suites (simulator, dynalite, moto) are not starved.
      maxWorkers: 2,
      env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
      provide: { tools },
      tags: TOOL_TAGS,
      reporters: ['default', new MissingToolsReporter(tools)],
    },
  };
});
