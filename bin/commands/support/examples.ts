/**
 * The Examples section of each command's `--help` (as `kubectl` and `gh` print them): a few
 * command lines a person would type, each with what it does. One table, so that a test can check
 * that every command has examples and that every option an example uses is one the command has.
 */
import type { Command } from 'commander';

/** One example: the command line (after `ecsr`) and what it does. */
export interface Example {
  readonly line: string;
  readonly does: string;
}

/** Examples by command path (`get`, `set image`). */
export const EXAMPLES: ReadonlyMap<string, readonly Example[]> = new Map(Object.entries({
  apply: [
    { line: 'apply -f shop.yaml', does: 'write the specs of a file (after checking them)' },
    { line: 'apply -f specs/ --wait --timeout 15m', does: 'a directory of specs, then wait until every service runs them' },
    { line: 'apply -f - < web.yaml --no-verify', does: 'from stdin, without the checks outside ECS' },
  ],
  validate: [
    { line: 'validate -f shop.yaml', does: 'check specs offline: each problem names the attribute' },
    { line: 'validate -f specs/', does: 'every *.yaml of a directory' },
  ],
  verify: [
    { line: 'verify -f shop.yaml', does: 'check what specs reference: subnets, security groups, roles, images, secrets' },
    { line: 'verify -f shop.yaml -o json', does: 'the same, as JSON' },
  ],
  get: [
    { line: 'get', does: 'every spec and its status' },
    { line: 'get shop -o wide', does: 'one cluster, with the whole reason and the last action' },
    { line: 'get shop/web -o yaml', does: 'one service, spec and status as YAML' },
    { line: 'get -l team=payments', does: 'the specs whose tags include team=payments' },
    { line: 'get --watch --interval 2s', does: 'refresh the table in place' },
  ],
  describe: [
    { line: 'describe shop/web', does: 'spec, status, conditions, ECS events and tasks' },
    { line: 'describe shop/web --events 30 -o json', does: 'more events, as JSON' },
  ],
  set: [{ line: 'set image shop/web nginx=public.ecr.aws/nginx/nginx:1.28', does: "change one container's image in the spec" }],
  'set image': [
    { line: 'set image shop/web public.ecr.aws/nginx/nginx:1.28', does: "the shorthand container's image" },
    { line: 'set image shop/web sidecar=public.ecr.aws/aws-observability/aws-for-fluent-bit:stable --wait', does: 'one container, then wait for the rollout' },
  ],
  scale: [
    { line: 'scale shop/web 5', does: 'set desiredCount to 5 in the spec' },
    { line: 'scale shop/web 0 --wait', does: 'stop every task and wait until none runs' },
  ],
  restart: [
    { line: 'restart shop/web', does: 'force a new deployment (a mutable tag pushed again)' },
    { line: 'restart shop/web --wait --timeout 20m', does: 'and wait until it completed' },
  ],
  diff: [
    { line: 'diff -f shop.yaml', does: 'what applying the file would change, before writing it' },
    { line: 'diff -f shop.yaml --exit-code', does: 'exit 2 when anything would change (for CI)' },
  ],
  plan: [
    { line: 'plan', does: "the next pass's actions for the table as it is" },
    { line: 'plan -o json --exit-code', does: 'as JSON; exit 2 when there are actions' },
  ],
  delete: [
    { line: 'delete shop/web', does: 'show what would be deleted, ask, then mark the spec absent' },
    { line: 'delete shop/web --dry-run', does: 'only show it' },
    { line: 'delete shop/web --yes --wait', does: 'without asking, and wait until it is gone' },
  ],
  history: [
    { line: 'history shop/web', does: 'the revisions of a spec: when, by whom, and what came of each' },
    { line: 'history shop/web --diff 3..5', does: 'the attributes that differ between revisions 3 and 5' },
  ],
  rollback: [
    { line: 'rollback shop/web', does: 'write the revision before the current one back' },
    { line: 'rollback shop/web --to 3 --wait', does: 'revision 3, then wait until the service runs it' },
  ],
  logs: [
    { line: 'logs shop/web', does: "the last 10 minutes of the service's tasks (awslogs)" },
    { line: 'logs shop/web --container web --since 1h -f', does: 'one container, from an hour ago, following' },
  ],
  wait: [
    { line: 'wait shop/web', does: 'until the service runs its spec and stays there' },
    { line: 'wait shop/web --for deleted --timeout 5m', does: 'until it is deleted' },
  ],
  ui: [
    { line: 'ui', does: 'the live fleet page on http://127.0.0.1:4780' },
    { line: 'ui --port 0 --open', does: "a free port, opened in the desktop's browser" },
  ],
  continue: [
    { line: 'continue shop/web', does: 'answer the PAUSE hook a native deployment waits on: go on' },
    { line: 'continue shop/web --rollback', does: 'answer it by rolling the deployment back' },
  ],
  abort: [{ line: 'abort shop/web', does: 'stop the deployment in progress; ECS rolls it back' }],
  export: [{ line: 'export > specs.yaml', does: 'every spec of the table as YAML (a backup)' }],
  import: [
    { line: 'import shop/web > web.yaml', does: 'a spec from a running service, without redeploying it' },
    { line: 'import --all shop --apply', does: 'every service of a cluster, written to the table' },
  ],
  reconcile: [
    { line: 'reconcile', does: 'run one pass now, as the Lambda does' },
    { line: 'reconcile --dry-run --json', does: 'plan only, the summary as JSON' },
  ],
  purge: [
    { line: 'purge shop', does: 'list the deleted specs of cluster shop, ask, then remove their items' },
    { line: 'purge --dry-run', does: 'only list the deleted specs of every cluster' },
    { line: 'purge shop --yes', does: 'without asking' },
  ],
  prune: [{ line: 'prune --confirm shop --for 30m', does: 'let passes delete owned services without a spec in a held cluster' }],
  local: [
    { line: 'local', does: 'the tour: embedded DynamoDB and a simulated Fargate cluster' },
    { line: 'local --forever --report run.html', does: 'keep running; point other ecsr commands at it' },
  ],
  sim: [{ line: 'sim --port 4100 --cluster shop', does: 'the ECS simulator alone, for your own scripts' }],
  completion: [
    { line: 'completion bash > ~/.local/share/bash-completion/completions/ecsr', does: 'bash completion, loaded by bash-completion' },
    { line: 'completion zsh > "${fpath[1]}/_ecsr"', does: 'zsh completion, on the function path' },
    { line: 'completion fish > ~/.config/fish/completions/ecsr.fish', does: 'fish completion' },
  ],
} satisfies Record<string, readonly Example[]>));

/** The path of `cmd` below the program: `get`, `set image`. */
export function commandPath(cmd: Command): string {
  const names: string[] = [];
  for (let c: Command | null = cmd; c !== null && c.parent !== null; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

/** The Examples section of `path`, or '' when it has none. */
export function examplesText(path: string): string {
  const examples = EXAMPLES.get(path);
  if (examples === undefined || examples.length === 0) return '';
  return `\nExamples:\n${examples.map((e) => `  # ${e.does}\n  ecsr ${e.line}`).join('\n\n')}\n`;
}

/** Adds the Examples section to the help of `cmd` and each of its subcommands that has one. */
export function addExamples(cmd: Command): void {
  const text = examplesText(commandPath(cmd));
  if (text !== '') cmd.addHelpText('after', text);
  for (const sub of cmd.commands) addExamples(sub);
}
