/**
 * Truthful waiting, end to end: `ecsr apply --wait` and `ecsr wait` (the CLI in process) against
 * dynalite and the ECS simulator, with passes run here a simulated minute apart. Success means
 * the status and ECS agree the deployment is COMPLETED and the service stayed at desired for the
 * stability window (by ECS's clock); every case that needs a person has its own first sentence.
 */
import { DeleteCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { createCluster } from '../../local/stack';
import { createHandMadeService, spec, useCliStack } from './harness';
import { ecsr } from '../support/cli-in-process';

const FAST = ['--interval', '200ms'];
/** Each case runs several CLI commands and a stability window: generous on a busy machine (not a measure). */
const SLOW = 300_000;

describe('ecsr --wait and ecsr wait tell the truth', () => {
  const { stack, aCase } = useCliStack('w');

  it('apply --wait does not report a crash-looping service as converged', async () => {
    // Prepare: the image crash-loops (the simulator's "crashloop" rule: RUNNING 3-10 s, then exit 1).
    const c = await aCase();
    const stop = c.passLoop();
    const path = c.file('crash.yaml', spec(c.cluster, 'api').replace('nginx:1.27', 'nginx:crashloop'));

    // Act
    const r = await ecsr(['apply', '-f', path, '--wait', ...FAST, '--timeout', '15s'], { env: c.env });
    await stop();

    // Assess: never "converged"; the reason names the stopped tasks of the new deployment
    expect(r.stdout).not.toMatch(/service converged/);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(new RegExp(`^ecsr apply: Timed out after \\d+s waiting for ${c.cluster}/api`));
    expect(r.stdout + r.stderr).toMatch(/EssentialContainerExited/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  }, SLOW);

  it('apply --wait on a missing cluster says so, and what to do', async () => {
    // Prepare: a cluster the reconciler may manage (its role names it) that does not exist yet
    const c = await aCase({ alsoManaged: (cluster) => [`${cluster}x`] });
    const stop = c.passLoop();
    const missing = `${c.cluster}x`;

    // Act
    const r = await ecsr(['apply', '-f', c.file('s.yaml', spec(missing, 'web')), '--wait', ...FAST, '--timeout', '60s'], { env: c.env });
    await stop();
    // The spec stays; once the cluster exists, the next pass creates the service (as the sentence says).
    await createCluster(stack(), missing);
    const next = await c.pass();

    // Assess
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      new RegExp(`^warning: ${missing}/web: cluster ${missing}: cluster ${missing} does not exist; the reconciler never creates clusters \\(aws ecs create-cluster --cluster-name ${missing}\\)\necsr apply: Cluster ${missing} does not exist, so ${missing}/web was not created: the reconciler never creates clusters\\. Create it \\(aws ecs create-cluster --cluster-name ${missing}\\)`),
    );
    expect(next.actions.map((a) => [a.type, a.outcome])).toContainEqual(['CreateService', 'applied']);
  }, SLOW);

  it('apply --wait on a service someone else owns says to adopt it', async () => {
    // Prepare: a service of that name created outside the reconciler (no owner tag)
    const c = await aCase();
    await createHandMadeService(stack().ecsClientConfig, c.cluster, 'web');
    const stop = c.passLoop();

    // Act
    const r = await ecsr(['apply', '-f', c.file('s.yaml', spec(c.cluster, 'web')), '--wait', ...FAST, '--timeout', '60s'], { env: c.env });
    await stop();

    // Assess
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      new RegExp(`^warning: ${c.cluster}/web: service web: service web exists without the owner tag ecs-reconciler:owner=ecs-reconciler, so the reconciler leaves it alone \\(NotOwned\\): set adopt: true, or run ecsr import ${c.cluster}/web --apply\n`),
    );
    expect(r.stderr).toMatch(
      new RegExp(`^ecsr apply: ${c.cluster}/web already exists in ECS without this reconciler's owner tag, so the reconciler leaves it alone\\. To take it over, set \`adopt: true\``, 'm'),
    );
    expect(r.stderr).toMatch(/condition Blocked=True NotOwned: /);
  }, SLOW);

  it('apply --wait on a spec outside the allow-list names the list to change', async () => {
    // Prepare: the reconciler allows only one registry
    const c = await aCase({ reconcilerEnv: { ALLOWED_IMAGE_REGISTRIES: 'registry.example.com' } });
    const stop = c.passLoop();

    // Act
    const r = await ecsr(['apply', '-f', c.file('s.yaml', spec(c.cluster, 'web')), '--wait', ...FAST, '--timeout', '60s'], { env: c.env });
    await stop();

    // Assess
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`^warning: ${c.cluster}/web: allow-list image: the reconciler refuses it: image public\\.ecr\\.aws\\S* \\(registry public\\.ecr\\.aws\\) is not in the allow-list ALLOWED_IMAGE_REGISTRIES \\[registry\\.example\\.com\\]\n`));
    expect(r.stderr).toMatch(new RegExp(`^ecsr apply: The reconciler refuses ${c.cluster}/web: image public\\.ecr\\.aws\\S* \\(registry public\\.ecr\\.aws\\) is not in the allow-list ALLOWED_IMAGE_REGISTRIES \\[registry\\.example\\.com\\]\\. Use a value the allow-list permits, or add it to the allow-list \\(the ALLOWED_\\* variable`, 'm'));
  }, SLOW);

  it('wait on an item someone wrote by hand that is invalid names the attribute', async () => {
    // Prepare: a whole item written with PutItem, as a script does
    const c = await aCase();
    await stack().doc.send(new PutCommand({ TableName: c.table, Item: { cluster: c.cluster, service: 'bad', image: 'nginx:1', desiredCount: 1, cpu: 3 } }));

    // Act
    const r = await ecsr(['wait', `${c.cluster}/bad`, ...FAST, '--timeout', '10s'], { env: c.env });

    // Assess
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`^ecsr wait: The spec of ${c.cluster}/bad in the table is invalid, so the reconciler does nothing for it\\. Fix the attributes listed below`));
    expect(r.stderr).toMatch(/\n {2}cpu: must be one of 256/);
  }, SLOW);

  it('wait follows a spec written by any means until it converges, then until it is deleted', async () => {
    // Prepare: a script's PutItem, not ecsr apply
    const c = await aCase();
    await stack().doc.send(new PutCommand({ TableName: c.table, Item: { cluster: c.cluster, service: 'web', image: 'public.ecr.aws/nginx/nginx:1.27', desiredCount: 3 } }));
    const stop = c.passLoop();

    // Act
    const converged = await ecsr(['wait', `${c.cluster}/web`, ...FAST, '--timeout', '90s'], { env: c.env });
    const wrongWay = await ecsr(['wait', `${c.cluster}/web`, '--for', 'deleted', ...FAST, '--timeout', '5s'], { env: c.env });
    const marked = await ecsr(['delete', `${c.cluster}/web`, '--yes'], { env: c.env });
    const deleted = await ecsr(['wait', `${c.cluster}/web`, '--for', 'deleted', ...FAST, '--timeout', '90s'], { env: c.env });
    await stop();
    await stack().doc.send(new DeleteCommand({ TableName: c.table, Key: { cluster: c.cluster, service: 'web' } }));
    const gone = await ecsr(['wait', `${c.cluster}/web`, '--for', 'deleted', ...FAST, '--timeout', '10s'], { env: c.env });

    // Assess
    expect(converged.stderr).toBe('');
    expect(converged.code).toBe(0);
    expect(converged.stdout).toMatch(/1 of 1 service converged in \d+s \(this computer's clock\), each stable for 30s \(ECS's clock\)\.\n$/);
    expect(wrongWay.code).toBe(1);
    expect(wrongWay.stderr).toMatch(new RegExp(`^ecsr wait: The spec of ${c.cluster}/web is present, so the reconciler will not delete it: mark it absent first`));
    expect(marked.code).toBe(0);
    expect(deleted.stderr).toBe('');
    expect(deleted.code).toBe(0);
    expect(deleted.stdout).toMatch(/1 of 1 service deleted in \d+s\.\n$/);
    expect(deleted.stdout).not.toMatch(/running \d+\/0/);
    expect(gone.code).toBe(0);
    expect(gone.stdout).toMatch(new RegExp(`${c.cluster}/web is deleted \\(ECS: (INACTIVE|MISSING)\\)\\.`));
  }, SLOW);

  it('wait ends at a standing refusal of the spec with ECS\'s words, not at the timeout', async () => {
    // Prepare: IAM refuses every CreateService in the case's cluster.
    const c = await aCase();
    const denied = 'User: arn:aws:sts::123456789012:assumed-role/reconciler/fn is not authorized to perform: ecs:CreateService';
    stack().sim.injectFault({ action: 'CreateService', cluster: c.cluster, errorType: 'AccessDeniedException', message: denied });
    expect((await ecsr(['apply', '-f', c.file('s.yaml', spec(c.cluster, 'web'))], { env: c.env })).code).toBe(0);
    const stop = c.passLoop();

    // Act
    const r = await ecsr(['wait', `${c.cluster}/web`, ...FAST, '--timeout', '50s'], { env: c.env });
    await stop();
    stack().sim.clearFaults();

    // Assess: exit 1 (a person must act), not 2 (the timeout), in ECS's words
    expect(r.code).toBe(1);
    expect(r.stderr).not.toMatch(/Timed out/);
    expect(r.stderr).toMatch(new RegExp(`^ecsr wait: IAM refuses the reconciler's call for ${c.cluster}/web: CreateService: ${denied.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}\\.`));
    expect(r.stderr).toMatch(/condition ActionRejected=True AccessDenied: CreateService: User: /);
  }, SLOW);

  it('apply --wait of a spec naming a subnet that does not exist ends with ECS\'s refusal', async () => {
    // Prepare: the local stack's VPC has no subnet-0000000000000dead.
    const c = await aCase();
    const stop = c.passLoop();

    // Act
    const r = await ecsr(['apply', '-f', c.file('s.yaml', spec(c.cluster, 'web', 'subnets: [subnet-0000000000000dead]\n')), '--wait', ...FAST, '--timeout', '50s'], { env: c.env });
    await stop();

    // Assess
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      new RegExp(`^ecsr apply: ECS refuses the reconciler's call for ${c.cluster}/web: CreateService: Error retrieving subnet information for \\[subnet-0000000000000dead\\]: The subnet ID 'subnet-0000000000000dead' does not exist`, 'm'),
    );
    expect((await c.item('web'))?.status?.phase).toBe('Degraded');
  }, SLOW);
});
