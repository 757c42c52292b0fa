/**
 * What the archive (docs/ARCHIVE.md) costs per million deliveries: our receiver twice over the
 * same load, one processor archiving to a bucket on fauxqs and one not, side by side. From the
 * archiving run: the S3 requests the processor made per delivery (counted by the client
 * middleware), the bytes stored per delivery (the objects listed back), and the processor's extra
 * billed duration per delivery against the run without the archive. Priced with `prices.ts`.
 */
import { CreateBucketCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { ARCHIVE_PREFIX } from '../lib/contract';
import { billedSeconds, CostLine, line, MEMORY_MB } from './cost';
import { RequestCounter } from './counting';
import { BenchEnvironment } from './environment';
import { PipelineOptions, runPipeline } from './pipeline';
import { buildOurReceiver, Stage } from './receivers';

export interface ArchiveCost {
  readonly conditions: string;
  readonly deliveries: number;
  /** Objects the processor wrote, and its S3 requests per delivery. */
  readonly objects: number;
  readonly putsPerDelivery: number;
  /** Archive bytes stored per delivery (its JSON line, base64 body included). */
  readonly bytesPerDelivery: number;
  /** Billed processor milliseconds per delivery, with and without the archive. */
  readonly processorMsPerDelivery: { readonly archiving: number; readonly without: number };
  /** Per million deliveries: the writes and the extra duration once, and a month of keeping what they wrote. */
  readonly lines: CostLine[];
  readonly usdPerMillion: number;
}

/** Runs the load through both processors and prices the difference. */
export async function measureArchiveCost(env: BenchEnvironment, deliveries: number, pipeline: PipelineOptions): Promise<ArchiveCost> {
  const bucket = `bench-archive-${Date.now().toString(36)}`;
  const s3 = env.s3();
  await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  const counter = new RequestCounter();
  const archiving = await runPipeline(env, await buildOurReceiver(env, { counter }, `archive-${deliveries}`, { archiveBucket: bucket }), deliveries, pipeline);
  const without = await runPipeline(env, await buildOurReceiver(env, { counter: new RequestCounter() }, `no-archive-${deliveries}`), deliveries, pipeline);
  for (const run of [archiving, without]) {
    if (run.processed !== deliveries || run.deadLettered !== 0)
      throw new Error(`${run.receiver}: ${run.processed} processed, ${run.deadLettered} dead-lettered of ${deliveries}`);
  }
  const puts = counter
    .all()
    .filter((entry) => entry.stage === Stage.PROCESSOR && entry.service === 'S3')
    .reduce((sum, entry) => sum + entry.attempts, 0);
  let objects = 0;
  let bytes = 0;
  let token: string | undefined;
  do {
    const page = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: `${ARCHIVE_PREFIX}/`, ContinuationToken: token }));
    for (const object of page.Contents ?? []) {
      objects++;
      bytes += object.Size ?? 0;
    }
    token = page.NextContinuationToken;
  } while (token);
  const billedMs = (run: typeof archiving) => (run.batches.reduce((sum, batch) => sum + billedSeconds(batch.ms), 0) * 1000) / deliveries;
  const processorMsPerDelivery = { archiving: billedMs(archiving), without: billedMs(without) };
  const extraGbs = (Math.max(0, processorMsPerDelivery.archiving - processorMsPerDelivery.without) / 1000) * (MEMORY_MB.processor / 1024);
  const lines = [
    line('S3 PUT (archive objects)', puts / deliveries, 'request', 's3Put', `${objects} objects for ${deliveries} deliveries`),
    line('S3 storage, one month', bytes / deliveries / 1024 ** 3, 'GB-month', 's3StandardGbMonth', `${(bytes / deliveries).toFixed(0)} B per delivery`),
    line('Lambda duration (processor, extra)', extraGbs, 'GB-second', 'lambdaArmGbSecond', 'against the same load without the archive'),
  ];
  return {
    conditions: `${deliveries} deliveries of ${pipeline.bodyBytes} B through our receiver with and without the archive; batches of up to 10 as the SQS event source makes them`,
    deliveries,
    objects,
    putsPerDelivery: puts / deliveries,
    bytesPerDelivery: bytes / deliveries,
    processorMsPerDelivery,
    lines,
    usdPerMillion: lines.reduce((sum, entry) => sum + entry.usdPerMillion, 0),
  };
}
