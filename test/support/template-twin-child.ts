/**
 * A template twin in its own process (started by `startTemplateTwinProcess`, test/support/template-twin-process.ts): the options come as
 * JSON in argv, the ready line, the IAM gateway's record and the confirmations the SNS stand-in's host was asked for go back over the IPC channel.
 */
import type { Denial } from '#twin/testing';
import { readyLine, startTemplateTwin, type TemplateTwinOptions } from '#twin/testing/twin';

/** What the parent asks for. */
export type ChildRequest = { readonly type: 'iam' } | { readonly type: 'snsConfirmations' } | { readonly type: 'stop' };

/** A subscription confirmation the SNS stand-in's host recorded. */
export interface SnsConfirmation {
  readonly topicArn: string;
  readonly token: string;
}

/** What the gateway judged: every refusal, the refusals by function, and the calls judged by principal. */
export interface IamRecord {
  readonly enforced: boolean;
  readonly denials: readonly Denial[];
  readonly deniedByFunction: Readonly<Record<string, number>>;
  readonly evaluated: Readonly<Record<string, number>>;
}

export type ChildMessage =
  | { readonly type: 'ready'; readonly ready: Record<string, unknown> }
  | { readonly type: 'iam'; readonly record: IamRecord }
  | { readonly type: 'snsConfirmations'; readonly confirmations: readonly SnsConfirmation[] }
  | { readonly type: 'failed'; readonly error: string };

function send(message: ChildMessage): void {
  process.send!(message);
}

async function main(): Promise<void> {
  const options = JSON.parse(process.argv[2]) as TemplateTwinOptions;
  const twin = await startTemplateTwin({ ...options, log: (line) => process.stderr.write(`${line}\n`) });
  const stop = () => void twin.stop().then(() => process.exit(0));
  process.on('message', (request: ChildRequest) => {
    if (request.type === 'stop') return stop();
    if (request.type === 'snsConfirmations') return send({ type: 'snsConfirmations', confirmations: twin.services.sns.host.confirmations });
    const gateway = twin.services.iam?.gateway;
    send({
      type: 'iam',
      record: {
        enforced: gateway !== undefined,
        denials: gateway?.denials ?? [],
        deniedByFunction: twin.deniedByFunction(),
        evaluated: Object.fromEntries(gateway?.evaluated ?? []),
      },
    });
  });
  // A test that died leaves no twin behind.
  process.once('disconnect', stop);
  send({ type: 'ready', ready: readyLine(twin) });
}

main().catch((error: unknown) => {
  send({ type: 'failed', error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  process.exit(1);
});
