/**
 * The app side of the simulation: it submits work to the simulated providers and, like a real
 * app, records every submitted task in the submission ledger (`SubmissionLedger` of `client/submission-ledger.ts`, one
 * conditional PutItem against the inbox table) right after the provider answered with its id, so
 * that the inbox's reconciler can poll for results whose deliveries never arrive.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { RecordedSubmission, SubmissionLedger } from '../../../../client/submission-ledger';
import { FakeBatch, FakeMessageBatchesApi } from './message-batches/fake-api';
import { AnswerlineTask, SimulatedAnswerline } from './answerline/simulator';
import { EchonovaJob, SimulatedEchonova } from './echonova/simulator';
import { sleep } from './sender';

export interface SimulatedAppOptions {
  /** A client of the inbox's DynamoDB (the app's own credentials, not the functions'). */
  readonly dynamodb: DynamoDBClient;
  readonly tableName: string;
  /** The reconciler's horizon of each polled provider, seconds. */
  readonly horizonSeconds: Readonly<Record<string, number>>;
  readonly answerline?: SimulatedAnswerline;
  readonly echonova?: SimulatedEchonova;
  /** A batch API and the inbox's name for it. */
  readonly batches?: { readonly api: FakeMessageBatchesApi; readonly provider: string };
}

export class SimulatedApp {
  readonly ledger: SubmissionLedger;
  readonly stats = { submitted: 0, recorded: 0, alreadyRecorded: 0, ledgerRetries: 0 };

  constructor(private readonly options: SimulatedAppOptions) {
    this.ledger = new SubmissionLedger({ client: options.dynamodb, tableName: options.tableName, horizonSeconds: options.horizonSeconds });
  }

  /**
   * Creates an Answerline task with `idempotencyKey` (a job's key, `-rN` for a resubmission) and
   * records it, with its `deadline` (epoch ms) when the resource is gone after one.
   */
  async submitAnswerline(idempotencyKey: string, deadline?: number): Promise<AnswerlineTask> {
    const task = this.options.answerline!.createTask({ idempotencyKey });
    this.stats.submitted++;
    await this.record(() => this.ledger.recordSubmission({ provider: 'answerline', taskId: task.id, idempotencyKey, ...(deadline ? { deadline } : {}) }));
    return task;
  }

  /** Submits an Echonova job and records it by its id. */
  async submitEchonova(label: string): Promise<EchonovaJob> {
    const job = this.options.echonova!.createJob(label);
    this.stats.submitted++;
    await this.record(() => this.ledger.recordSubmission({ provider: 'echonova', taskId: job.jobId }));
    return job;
  }

  /** Creates a batch of requests with these custom ids (those in `errored` fail) and records it with them. */
  async submitBatch(customIds: readonly string[], errored: readonly string[]): Promise<FakeBatch> {
    const { api, provider } = this.options.batches!;
    const batch = api.addBatch({ customIds, errored });
    this.stats.submitted++;
    await this.record(() => this.ledger.recordBatch({ provider, batchId: batch.id, childIds: customIds, submittedAt: batch.createdAt }));
    return batch;
  }

  /** Recording is idempotent; a failed write is retried, as an app's submission step would. */
  private async record(write: () => Promise<RecordedSubmission>): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        const out = await write();
        if (out.outcome === 'recorded') this.stats.recorded++;
        else this.stats.alreadyRecorded++;
        return;
      } catch (error) {
        if (attempt >= 5) throw error;
        this.stats.ledgerRetries++;
        await sleep(100 * attempt);
      }
    }
  }
}
