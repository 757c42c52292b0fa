/**
 * A twin in a process of its own, for tests (jest cannot load the ESM-only emulators in its
 * workers): started with the TwinOptions given as JSON in argv[2], optionally in front of a fake
 * resource API whose `poisonResource` always fails, or of a fake Answerline task API that its
 * reconciler polls, then the demo run when `demo` is set. Prints one JSON line with what a test
 * drives it by, and serves until SIGTERM.
 */
import { runDemo } from '../../src/twin/demo';
import { FakeAnswerlineApi, NewFakeTask } from '../../src/providers/answerline/fake-api';
import { FakeResponsesApi } from '../../src/providers/standard-webhooks/fake-api';
import { startTwin, TwinOptions } from '../../src/twin/inbox-twin';

/** What the test asks for: TwinOptions (JSON-safe), and the fake resource API's broken resource. */
export interface TwinProcessRequest {
  readonly options: Omit<TwinOptions, 'interceptors' | 'log' | 'authoritativeReads' | 'extraSecrets'>;
  /** A provider whose authoritative read goes to a fake resource API that always fails this resource. */
  readonly poisonResource?: { readonly provider: string; readonly resourceId: string };
  /** The `answerline` provider is polled at a fake task API holding these tasks (each walks its status script, one step per poll). */
  readonly answerlineTasks?: readonly NewFakeTask[];
  readonly demo?: boolean;
}

/** The line the process prints once it serves. */
export interface TwinProcessReady {
  readonly urls: Readonly<Record<string, string>>;
  /** The URL a provider that signs one signs (Square, Twilio), by provider. */
  readonly signedUrls: Readonly<Record<string, string>>;
  readonly secrets: Readonly<Record<string, string>>;
  readonly consoleUrl?: string;
  /** The ops CLI's configuration of the inbox. */
  readonly opsConfigPath: string;
  readonly demo?: Awaited<ReturnType<typeof runDemo>>;
  /** What the demo printed, line by line. */
  readonly demoLog?: readonly string[];
}

async function main(): Promise<void> {
  const request = JSON.parse(process.argv[2] ?? '{}') as TwinProcessRequest;
  const responses = request.poisonResource ? new FakeResponsesApi() : undefined;
  await responses?.start();
  const apiKeySecret = 'twin-process/resource-api-key';
  if (request.poisonResource) responses!.failAlways(request.poisonResource.resourceId);
  const answerline = request.answerlineTasks ? new FakeAnswerlineApi() : undefined;
  await answerline?.start();
  for (const task of request.answerlineTasks ?? []) answerline!.addTask(task);
  const answerlineKeySecret = 'twin-process/answerline-api-key';
  const twin = await startTwin({
    ...request.options,
    ...(request.poisonResource
      ? {
          authoritativeReads: {
            [request.poisonResource.provider]: { urlTemplate: responses!.urlTemplate, idJsonPath: 'data.id', apiKeySecretId: apiKeySecret },
          },
        }
      : {}),
    ...(answerline
      ? {
          polling: [
            { provider: 'answerline', taskUrlTemplate: answerline.taskUrlTemplate, apiKeySecretId: answerlineKeySecret, horizonSeconds: 1, recheckSeconds: 1 },
          ],
        }
      : {}),
    extraSecrets: {
      ...(responses ? { [apiKeySecret]: responses.apiKey } : {}),
      ...(answerline ? { [answerlineKeySecret]: answerline.apiKey } : {}),
    },
    log: (line) => process.stderr.write(`${line}\n`),
  });
  const demoLog: string[] = [];
  const demo = request.demo ? await runDemo(twin, (line) => demoLog.push(line)) : undefined;
  const ready: TwinProcessReady = {
    urls: twin.urls,
    signedUrls: twin.signedUrls,
    secrets: twin.secrets,
    consoleUrl: twin.template.consoleUrl,
    opsConfigPath: twin.opsConfigPath,
    ...(demo ? { demo, demoLog } : {}),
  };
  process.stdout.write(`${JSON.stringify(ready)}\n`);
  process.once('SIGTERM', () => {
    void Promise.all([twin.stop(), responses?.stop(), answerline?.stop()]).then(() => process.exit(0));
  });
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
