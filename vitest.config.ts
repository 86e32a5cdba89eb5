import { defineConfig } from 'vitest/config';
import { detectTools, MissingToolsReporter, TOOL_TAGS } from './test/support/tools-setup';

// Outside tools (moto, the AWS CLI, cfn-lint, chromium) are found once, here, and handed to the
// test files (`needs()` in test/support/tools.ts) and to the reporter that names what was skipped.
export default defineConfig(async () => {
  const tools = await detectTools();
  return {
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
