/**
 * `npm run cost`: the monthly cost of 10 / 100 / 1,000 healthy services, measured from the EMF and
 * logs the reconciler's steady passes write (`./cost-measure`), priced with AWS's public list
 * prices. Prints one table per fleet size and a summary, as Markdown (docs/deploy.md quotes it).
 *
 *   npm run cost                       # 10, 100 and 1,000 services, 10 steady passes each
 *   npm run cost -- --sizes 10,100 --passes 5
 */
import { Command, InvalidArgumentError } from 'commander';
import { billTotal, measureFleet, monthlyBill, PASSES_PER_MONTH, type BillLine, type FleetMeasurement } from './cost-measure';

function sizeList(value: string): number[] {
  const sizes = value.split(',').map((s) => Number(s.trim()));
  if (sizes.length === 0 || sizes.some((n) => !Number.isInteger(n) || n < 1 || n > 5000)) {
    throw new InvalidArgumentError('give comma-separated whole numbers from 1 to 5000, e.g. 10,100,1000');
  }
  return sizes;
}

function positive(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 1000) throw new InvalidArgumentError('give a whole number from 1 to 1000');
  return n;
}

const program = new Command('cost')
  .description('Monthly cost of healthy fleets, measured from the EMF and logs of steady passes (ECS simulator + dynalite).')
  .option('--sizes <list>', 'fleet sizes (healthy services)', sizeList, [10, 100, 1000])
  .option('--passes <n>', 'steady passes measured per size', positive, 10);

const usd = (x: number) => `${x.toFixed(2)}`;

async function main(): Promise<void> {
  program.parse();
  const { sizes, passes } = program.opts<{ sizes: number[]; passes: number }>();
  // The Lambda's sinks: EMF must not be turned off by a developer setting.
  delete process.env.POWERTOOLS_DEV;
  delete process.env.POWERTOOLS_METRICS_DISABLED;
  const results: { m: FleetMeasurement; bill: BillLine[] }[] = [];
  for (const services of sizes) {
    const m = await measureFleet({ services, passes, progress: (msg) => process.stderr.write(`${msg}\n`) });
    process.stderr.write(`${services} services: measured ${passes} steady passes\n`);
    results.push({ m, bill: monthlyBill(m) });
  }
  const out: string[] = [];
  out.push(`Measured by \`npm run cost -- --sizes ${sizes.join(',')} --passes ${passes}\` (${new Date().toISOString().slice(0, 10)}); one pass a minute, ${PASSES_PER_MONTH.toLocaleString('en-US')} passes in a 30-day month; us-east-1 list prices, no free tier.`);
  out.push('');
  out.push('Measured per steady pass:');
  out.push('');
  out.push('| services | metric series (TaskLag) | datapoints | log bytes (events) | RRU | WRU | billed ms (of which rate-limit waits) | ECS calls | status writes | stream records |');
  out.push('|---|---|---|---|---|---|---|---|---|---|');
  for (const { m } of results) {
    out.push(
      `| ${m.services.toLocaleString('en-US')} | ${m.series.length} (${m.taskLagSeries}) | ${m.datapointsPerPass} | ${Math.round(m.logBytesPerPass).toLocaleString('en-US')} (${m.logEventsPerPass.toFixed(1)}) | ${m.readUnitsPerPass.toFixed(1)} | ${m.writeUnitsPerPass.toFixed(1)} | ${Math.round(m.billedMsPerPass).toLocaleString('en-US')} (${Math.round(m.limiterWaitMsPerPass).toLocaleString('en-US')}) | ${m.ecsCallsPerPass} | ${m.statusesWritten} | ${m.streamRecordsPerPass} |`,
    );
  }
  out.push('');
  out.push(`| item (USD / month) | ${results.map(({ m }) => m.services.toLocaleString('en-US')).join(' | ')} |`);
  out.push(`|---|${results.map(() => '---').join('|')}|`);
  for (let i = 0; i < results[0].bill.length; i++) {
    const item = results[0].bill[i].item;
    out.push(`| ${item} | ${results.map(({ bill }) => usd(bill[i].usd)).join(' | ')} |`);
  }
  out.push(`| **total** | ${results.map(({ bill }) => `**${usd(billTotal(bill))}**`).join(' | ')} |`);
  out.push('');
  out.push('Basis of each line (largest fleet):');
  out.push('');
  for (const l of results.at(-1)!.bill) out.push(`- ${l.item}: ${l.basis}`);
  process.stdout.write(`${out.join('\n')}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
