/**
 * Synth warns for every allow-list left open (unset: a spec may name anything, and whoever can
 * write the spec table chooses), naming the prop and the quick-start stack's `-c` key that close
 * it; a list that is set, even to nothing, is not warned about. The quick start as the README
 * deploys it warns for the lists it leaves open.
 */
import { readFileSync } from 'node:fs';
import { App, Stack } from 'aws-cdk-lib';
import { Annotations, Match } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { EcsReconciler, type EcsReconcilerProps } from '../../lib/ecs-reconciler';
import { EcsReconcilerStack, reconcilerPropsFromContext } from '../../lib/reconciler-stack';

const README = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

function openListWarnings(stack: Stack): string[] {
  return Annotations.fromStack(stack)
    .findWarning('*', Match.stringLikeRegexp('is not set: a spec'))
    .map((w) => String(w.entry.data));
}

function warningsFor(props: Partial<EcsReconcilerProps>): string[] {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new Stack(app, 'Test');
  new EcsReconciler(stack, 'Reconciler', { clusters: ['prod'], defaultSubnets: ['subnet-0a1'], defaultSecurityGroups: ['sg-0c3'], alarmEmail: 'ops@example.com', ...props });
  return openListWarnings(stack);
}

describe('synth warns for open allow-lists', () => {
  it.each([
    { prop: 'allowedSubnets', key: 'allowedSubnets', says: 'may name any subnet ids' },
    { prop: 'allowedSecurityGroups', key: 'allowedSecurityGroups', says: 'may name any security group ids' },
    { prop: 'allowPublicIp', key: 'allowPublicIp', says: 'may ask for a public IP' },
    { prop: 'allowedTargetGroups', key: 'targetGroups', says: 'may name any target group ARNs' },
    { prop: 'allowedSecrets', key: 'secretPrefixes', says: 'may name any valueFrom prefixes' },
    { prop: 'allowedImageRegistries', key: 'imageRegistries', says: 'may name any registry hosts' },
    { prop: 'allowedEfsFileSystems', key: 'efsFileSystems', says: 'may name any EFS file system ids' },
  ])('$prop unset: one warning naming it and -c $key', ({ prop, key, says }) => {
    const mine = warningsFor({}).filter((w) => w.startsWith(`${prop} is not set`));
    expect(mine).toHaveLength(1);
    expect(mine[0]).toContain(says);
    expect(mine[0]).toContain(`Set ${prop}`);
    expect(mine[0]).toContain(`-c ${key}=`);
  });

  it('a list that is set, to nothing or to entries, is not warned about', () => {
    const left = warningsFor({
      allowedSubnets: [],
      allowedSecurityGroups: ['sg-0c3'],
      allowPublicIp: true,
      allowedTargetGroups: [],
      allowedSecrets: [],
      allowedImageRegistries: ['public.ecr.aws'],
      allowedEfsFileSystems: [],
    });
    expect(left).toEqual([]);
  });

  const quickStart = (context: Record<string, string>) => {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    const stack = new EcsReconcilerStack(app, 'EcsReconciler', { reconciler: reconcilerPropsFromContext((k) => context[k]) });
    return openListWarnings(stack).map((w) => w.split(' ')[0]).sort();
  };

  it('the quick start: the README\'s command closes every list; without the network lists it warns for them', () => {
    const readme = README.replace(/\\\n\s*/g, ' ').match(/npx cdk deploy -c createCluster=true[^\n`]*/)?.[0] ?? '';
    const context = Object.fromEntries([...readme.matchAll(/-c\s+([A-Za-z]+)=(\S+)/g)].map((m) => [m[1], m[2]]));
    expect(context.createCluster).toBe('true');
    expect(quickStart(context)).toEqual([]);
    const { allowedSubnets: _s, allowedSecurityGroups: _g, allowPublicIp: _p, ...older } = context;
    expect(quickStart(older)).toEqual(['allowPublicIp', 'allowedSecurityGroups', 'allowedSubnets']);
  });
});
