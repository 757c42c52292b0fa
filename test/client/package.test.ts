import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import * as ts from 'typescript';
import { createTables, resourceNames } from '#twin/testing';
import { uniqueName } from '../support/inbox-fixture';
import { SubmissionState } from '../../lib/contract';

/**
 * The ledger client as a user's app gets it: `cdk-webhook-inbox/client`, resolved through the
 * package's exports to the bundle `npm run bundle` ships, using the app's own DynamoDBClient.
 */
describe('the packaged submission ledger client', () => {
  const dynamodb = new DynamoDBClient({});
  afterAll(() => dynamodb.destroy());

  test('resolves through the package exports to the shipped bundle and records a submission', async () => {
    const entry = require.resolve('cdk-webhook-inbox/client');
    expect(entry).toMatch(/assets\/client\/index\.js$/);
    const { SubmissionLedger } = require(entry) as typeof import('../../client');
    const names = resourceNames(uniqueName('client'));
    await createTables(dynamodb, names);

    const ledger = new SubmissionLedger({ client: dynamodb, tableName: names.inboxTable });
    const first = await ledger.recordSubmission({ provider: 'answerline', taskId: 'tsk_packaged' });
    const again = await ledger.recordSubmission({ provider: 'answerline', taskId: 'tsk_packaged' });

    expect(first).toMatchObject({ outcome: 'recorded', key: 'ledger:answerline#tsk_packaged' });
    expect(again).toMatchObject({ outcome: 'already_recorded' });
    const item = await dynamodb.send(
      new GetItemCommand({ TableName: names.inboxTable, Key: { pk: { S: 'ledger:answerline#tsk_packaged' }, sk: { S: 'submission' } } }),
    );
    expect(item.Item).toMatchObject({ state: { S: SubmissionState.AWAITING }, awaitDueAt: { N: expect.any(String) } });
  });
});

describe('the packaged client types', () => {
  const manifest = require('cdk-webhook-inbox/package.json') as { exports: Record<string, { types?: string }> };
  const typesFile = join(dirname(require.resolve('cdk-webhook-inbox/package.json')), manifest.exports['./client'].types!);

  test('are one declaration file that imports nothing but the AWS SDK: no runtime internals', () => {
    const source = readFileSync(typesFile, 'utf8');
    const imported = [...source.matchAll(/from '([^']+)'/g)].map((match) => match[1]);
    expect(imported).toEqual(['@aws-sdk/client-dynamodb']);
    expect(source).toMatch(/export declare class SubmissionLedger\b/);
  });

  test('type-check an app that uses the client through the package exports, and reject a misuse', () => {
    const consumer = join(dirname(typesFile), '..', '..', 'consumer-of-client.ts');
    const diagnosticsOf = (code: string) => {
      const options: ts.CompilerOptions = {
        strict: true,
        noEmit: true,
        module: ts.ModuleKind.Node16,
        moduleResolution: ts.ModuleResolutionKind.Node16,
        target: ts.ScriptTarget.ES2022,
        types: ['node'],
        skipLibCheck: true,
      };
      const host = ts.createCompilerHost(options);
      const readFile = host.readFile.bind(host);
      host.readFile = (file) => (file === consumer ? code : readFile(file));
      const fileExists = host.fileExists.bind(host);
      host.fileExists = (file) => file === consumer || fileExists(file);
      const program = ts.createProgram([consumer], options, host);
      return ts.getPreEmitDiagnostics(program).map((diagnostic) => ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
    };
    const app = [
      "import { DynamoDBClient } from '@aws-sdk/client-dynamodb';",
      "import { SubmissionLedger } from 'cdk-webhook-inbox/client';",
      "const ledger = new SubmissionLedger({ client: new DynamoDBClient({}), tableName: 'inbox' });",
    ];
    expect(diagnosticsOf([...app, "void ledger.recordSubmission({ provider: 'answerline', taskId: 'tsk_1' });"].join('\n'))).toEqual([]);
    expect(diagnosticsOf([...app, 'void ledger.recordSubmission({ provider: 42 });'].join('\n')).join('\n')).toMatch(/not assignable to type 'string'/);
  });
});
