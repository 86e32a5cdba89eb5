/**
 * `ecsr set image CLUSTER/SERVICE [CONTAINER=]IMAGE [--wait]`: changes the image in a spec item,
 * the way `kubectl set image` and ecspresso's deploy are used from pipelines, so that CI bumps the
 * image through the desired state instead of around it. One conditional UpdateItem on that
 * attribute only (see `SpecTable.setImage`); with `--wait`, waits until the reconciler has rolled
 * the new image out, exactly as `ecsr apply --wait` does.
 */
import { Command, InvalidArgumentError } from 'commander';
import { serviceId, type ServiceKey } from '../../lambda/core/types';
import { waitAndReport, withWaitOptions, type WaitFlags } from './apply';
import { CliError } from './support/errors';
import { parseServiceRef, runAction, tableOf, withAwsOptions, withTargetOption, type AwsOptions, type TargetOption } from './support/options';
import { entryId, SpecTable } from './support/spec-table';
import { recordEdit } from './support/spec-history';

interface SetImageOptions extends AwsOptions, WaitFlags, TargetOption {
  wait?: boolean;
}

/** `[CONTAINER=]IMAGE`, split. */
export interface ImageAssignment {
  readonly container?: string;
  readonly image: string;
}

const CONTAINER_NAME_RE = /^[A-Za-z0-9_-]{1,255}$/;

/**
 * Parses `[CONTAINER=]IMAGE` (image references never contain `=`).
 * @throws InvalidArgumentError for an empty image or a container name ECS would refuse.
 */
export function parseImageAssignment(text: string): ImageAssignment {
  const eq = text.indexOf('=');
  const container = eq >= 0 ? text.slice(0, eq) : undefined;
  const image = eq >= 0 ? text.slice(eq + 1) : text;
  if (container !== undefined && !CONTAINER_NAME_RE.test(container)) {
    throw new InvalidArgumentError(`"${container}" is not a container name (letters, digits, - and _).`);
  }
  if (image === '') throw new InvalidArgumentError(`"${text}" names no image; use [CONTAINER=]IMAGE.`);
  return container === undefined ? { image } : { container, image };
}

function setImageCommand(): Command {
  const cmd = withWaitOptions(
    new Command('image')
      .description("Change a container's image in a spec (one conditional write of that attribute); the next pass rolls it out")
      .argument('<cluster/service>', 'the spec to change', parseServiceRef)
      .argument('<[container=]image>', 'the new image; name the container when the spec has several', parseImageAssignment),
    'wait until the service runs the new image (rollout COMPLETED, running = desired)',
  );
  return withAwsOptions(withTargetOption(cmd)).action(
    runAction(async (key: ServiceKey, assignment: ImageAssignment, opts: SetImageOptions) => {
      const table = SpecTable.open(tableOf(opts), opts.target);
      try {
        await table.assertTarget();
        const { outcome, previous, entry } = await table.setImage(key, assignment.container, assignment.image);
        if (outcome === 'set') await recordEdit(table, key, 'ecsr set image');
        const which = assignment.container === undefined ? '' : ` container ${assignment.container}`;
        process.stdout.write(
          outcome === 'unchanged'
            ? `${entryId(opts.target, key)}${which} image unchanged (${assignment.image})\n`
            : `${entryId(opts.target, key)}${which} image set: ${previous ?? '(none)'} -> ${assignment.image}\n`,
        );
        if (!opts.wait) return;
        if (!entry.result.ok) {
          throw new CliError(`${entryId(opts.target, key)} is not a valid spec, so the reconciler will not roll it out: fix it first (ecsr get ${entryId(opts.target, key)}).`);
        }
        await waitAndReport(table, [{ key, hash: entry.result.hash, state: entry.result.spec.state }], opts);
      } finally {
        table.close();
      }
    }),
  );
}

export function setCommand(): Command {
  return new Command('set').description('Change one field of a spec in place (today: image)').addCommand(setImageCommand());
}
