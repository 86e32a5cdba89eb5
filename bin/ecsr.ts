#!/usr/bin/env node
/**
 * `ecsr`, the command line of ecs-reconciler. Each command lives in `bin/commands/<name>.ts` and
 * exports a function returning a commander `Command`; add it to {@link COMMANDS} below.
 */
import { Command } from 'commander';
import { simCommand } from './commands/sim';

/** Every command of the CLI, in help order. */
const COMMANDS: (() => Command)[] = [simCommand];

export function buildProgram(): Command {
  const program = new Command('ecsr')
    .description('ecs-reconciler: a level-triggered reconciler for Amazon ECS on Fargate')
    .showHelpAfterError();
  for (const make of COMMANDS) program.addCommand(make());
  return program;
}

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
await buildProgram().parseAsync(process.argv);
