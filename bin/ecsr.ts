#!/usr/bin/env node
/**
 * `ecsr`, the command line of ecs-reconciler: the process around `main` (bin/main.ts, where the
 * commands are listed).
 *
 * Built with esbuild into `dist/` (scripts/build-cli.mjs; `npm ci` builds it, and `bin/ecsr.js`
 * rebuilds it when a source changed). From a checkout: `npx ecsr <command> ...`,
 * `npm run ecsr -- <command> ...`, or `npm start` for `ecsr local`. Every command that talks to AWS uses the SDK's standard configuration
 * (profile, region, `AWS_ENDPOINT_URL*`). Every error, commander's usage errors included, is
 * `ecsr <command>: <one sentence>` on stderr and a non-zero exit code (`--debug` adds the stack
 * trace). When the reader of stdout or stderr goes away (`ecsr export | head -2`), the process ends
 * quietly.
 */
import { EXIT } from './commands/support/exit-codes';
import { main } from './main';

/**
 * Ends the process quietly when the reader of `stream` goes away (EPIPE: `ecsr export | head -2`,
 * `ecsr local | head`), as command line tools do: exit code 0, or the failure code the command had
 * already set. Other stream errors are thrown as before.
 */
function exitQuietlyOnBrokenPipe(stream: NodeJS.WriteStream): void {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
    process.exit(typeof process.exitCode === 'number' ? process.exitCode : EXIT.ok);
  });
}

// The SDK's notice about future Node.js versions is not about anything a CLI user did; the
// variable is left alone when set.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

exitQuietlyOnBrokenPipe(process.stdout);
exitQuietlyOnBrokenPipe(process.stderr);

process.exitCode = await main(process.argv.slice(2));
