/**
 * The app side of the simulation: it submits work to the simulated providers and, like a real
 * app, records every submitted task in the submission ledger (`SubmissionLedger` of `client/submission-ledger.ts`, one
 * conditional PutItem against the inbox table) right after the provider answered with its id, so
 * that the inbox's reconciler can poll for results whose deliveries never arrive.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SubmissionLedger } from '../../client/submission-ledger';
import { AnswerlineTask, SimulatedAnswerline } from './answerline';
import { EchonovaJob, SimulatedEchonova } from './echonova';
import { sleep } from './sender';

export interface SimulatedAppOptions {
  /** A client of the inbox's DynamoDB (the app's own credentials, not the functions'). */
  readonly dynamodb: DynamoDBClient;
  readonly tableName: string;
  /** The reconciler's horizon of each polled provider, seconds. */
  readonly horizonSeconds: Readonly<Record<string, number>>;
  readonly answerline?: SimulatedAnswerline;
  readonly echonova?: SimulatedEchonova;
}

export class SimulatedApp {
  readonly ledger: SubmissionLedger;
  readonly stats = { submitted: 0, recorded: 0, alreadyRecorded: 0, ledgerRetries: 0 };

  constructor(private readonly options: SimulatedAppOptions) {
    this.ledger = new SubmissionLedger({ client: options.dynamodb, tableName: options.tableName, horizonSeconds: options.horizonSeconds });
  }

  /** Creates an Answerline task with `idempotencyKey` (a job's key, `-rN` for a resubmission) and records it. */
  async submitAnswerline(idempotencyKey: string): Promise<AnswerlineTask> {
    const task = this.options.answerline!.createTask({ idempotencyKey });
    this.stats.submitted++;
    await this.record({ provider: 'answerline', taskId: task.id, idempotencyKey });
    return task;
  }

  /** Submits an Echonova job and records it by its id. */
  async submitEchonova(label: string): Promise<EchonovaJob> {
    const job = this.options.echonova!.createJob(label);
    this.stats.submitted++;
    await this.record({ provider: 'echonova', taskId: job.jobId });
    return job;
  }

  /** Recording is idempotent; a failed write is retried, as an app's submission step would. */
  private async record(record: { provider: string; taskId: string; idempotencyKey?: string }): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        const out = await this.ledger.recordSubmission(record);
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
