/**
 * The quick start's network and cluster (`createCluster`): a VPC with two public subnets and no
 * NAT gateway, a security group (egress only) and a Fargate cluster with the FARGATE and
 * FARGATE_SPOT capacity providers and Container Insights.
 */
import { Validations } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as ecs from 'aws-cdk-lib/aws-ecs';
import type { Construct } from 'constructs';

/** What the quick start made, and the defaults its tasks get. */
export interface QuickStart {
  readonly vpc: ec2.Vpc;
  readonly cluster: ecs.Cluster;
  readonly subnets: string[];
  readonly securityGroups: string[];
}

/** Creates the quick-start VPC (`Vpc`), security group (`TaskSecurityGroup`) and cluster (`Cluster`) in `scope`. */
export function createQuickStart(scope: Construct): QuickStart {
  const vpc = new ec2.Vpc(scope, 'Vpc', {
    maxAzs: 2,
    natGateways: 0,
    subnetConfiguration: [{ name: 'public', subnetType: ec2.SubnetType.PUBLIC, cidrMask: 24 }],
    // true would add a custom-resource Lambda to the stack just to empty the default group.
    restrictDefaultSecurityGroup: false,
  });
  Validations.of(vpc).acknowledge({
    id: 'AwsSolutions-VPC7',
    reason:
      'Quick-start VPC carries only Fargate task traffic; flow logs add cost. Bring your own VPC (defaultSubnets) with flow logs for production.',
  });
  const sg = new ec2.SecurityGroup(scope, 'TaskSecurityGroup', {
    vpc,
    description: 'ecs-reconciler quick start: tasks, egress only',
    allowAllOutbound: true,
  });
  const cluster = new ecs.Cluster(scope, 'Cluster', {
    vpc,
    enableFargateCapacityProviders: true,
    containerInsightsV2: ecs.ContainerInsights.ENABLED,
  });
  return { vpc, cluster, subnets: vpc.publicSubnets.map((s) => s.subnetId), securityGroups: [sg.securityGroupId] };
}
