/**
 * The ops CLI's configuration resolution (a stack's DescribeStacks outputs, or a --config file)
 * and its command line: pure functions, plus `run` with a mocked CloudFormation client.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { mockClient } from 'aws-sdk-client-mock';
import { OPS_CONFIG_OUTPUT_DESCRIPTION, OpsConfig } from '../../lib/contract';
import { OpsClients } from '../../cli/clients';
import { adapterKindOf } from '../../cli/commands/inspect';
import { endpointProblems, inboxOutputs, loadConfigFile, opsConfigProblems, selectOpsConfig, StackOutput } from '../../cli/config';
import { OpsError, UsageError } from '../../cli/errors';
import { parseCommandLine, run } from '../../cli/main';

const config = (name: string): OpsConfig => ({
  inboxName: name,
  inboxTable: `${name}-inbox`,
  resultsTable: `${name}-results`,
  workQueueUrl: `https://sqs.eu-west-1.amazonaws.com/123456789012/${name}-work`,
  deadLetterQueueUrl: `https://sqs.eu-west-1.amazonaws.com/123456789012/${name}-dlq`,
  reconcilerFunctionName: `${name}-reconciler`,
  providers: ['answerline'],
});

/** An output as DescribeStacks returns it for one inbox. */
const inboxOutput = (path: string, value: OpsConfig | string): StackOutput => ({
  OutputKey: `${path.replace(/\W/g, '')}OpsConfig0A1B2C3D`,
  OutputValue: typeof value === 'string' ? value : JSON.stringify(value),
  Description: `${OPS_CONFIG_OUTPUT_DESCRIPTION} (${path})`,
});

const unrelated: StackOutput[] = [
  { OutputKey: 'InboxEndpointUrl', OutputValue: 'https://abc.execute-api.eu-west-1.amazonaws.com/', Description: 'Webhook inbox endpoint base URL' },
  { OutputKey: 'Other', OutputValue: '42' },
];

describe('selectOpsConfig: the inbox among a stack’s outputs', () => {
  test('one inbox: its OpsConfig, whatever else the stack outputs', () => {
    expect(selectOpsConfig([...unrelated, inboxOutput('Shop/Inbox', config('shop'))], 'Shop')).toEqual(config('shop'));
  });

  test('several inboxes: --inbox picks one by full path, trailing path or inbox name', () => {
    const outputs = [inboxOutput('Shop/Orders/Inbox', config('orders')), inboxOutput('Shop/Billing/Inbox', config('billing')), ...unrelated];
    expect(selectOpsConfig(outputs, 'Shop', 'Shop/Billing/Inbox')).toEqual(config('billing'));
    expect(selectOpsConfig(outputs, 'Shop', 'Orders/Inbox')).toEqual(config('orders'));
    expect(selectOpsConfig(outputs, 'Shop', 'billing')).toEqual(config('billing'));
  });

  test('several inboxes without --inbox is a usage error listing them', () => {
    const outputs = [inboxOutput('Shop/Orders/Inbox', config('orders')), inboxOutput('Shop/Billing/Inbox', config('billing'))];
    expect(() => selectOpsConfig(outputs, 'Shop')).toThrow(UsageError);
    expect(() => selectOpsConfig(outputs, 'Shop')).toThrow(
      'stack Shop has 2 inboxes (Shop/Orders/Inbox, Shop/Billing/Inbox): choose one with --inbox <construct path>',
    );
  });

  test('an --inbox that matches none, or several, is a usage error naming the candidates', () => {
    const outputs = [inboxOutput('Shop/Orders/Inbox', config('orders')), inboxOutput('Shop/Billing/Inbox', config('billing'))];
    expect(() => selectOpsConfig(outputs, 'Shop', 'Returns')).toThrow('stack Shop has no inbox at Returns; its inboxes: Shop/Orders/Inbox, Shop/Billing/Inbox');
    expect(() => selectOpsConfig(outputs, 'Shop', 'Inbox')).toThrow(/matches 2 inboxes .*give the full construct path/);
  });

  test('a stack without an inbox output is an operational error saying what is missing', () => {
    expect(() => selectOpsConfig(unrelated, 'Shop')).toThrow(OpsError);
    expect(() => selectOpsConfig(unrelated, 'Shop')).toThrow(`stack Shop has no output described "${OPS_CONFIG_OUTPUT_DESCRIPTION} (...)"`);
    expect(() => selectOpsConfig([], 'Shop')).toThrow(OpsError);
  });

  test('an inbox output that is not JSON, or lacks fields, names the output and the fields', () => {
    expect(() => inboxOutputs([inboxOutput('Shop/Inbox', '{not json')], 'Shop')).toThrow(/output ShopInboxOpsConfig0A1B2C3D \(Shop\/Inbox\) is not JSON/);
    const { inboxTable: _t, providers: _p, ...partial } = config('shop');
    expect(() => inboxOutputs([inboxOutput('Shop/Inbox', JSON.stringify(partial))], 'Shop')).toThrow(
      'stack Shop: output ShopInboxOpsConfig0A1B2C3D (Shop/Inbox): inboxTable is missing; providers is missing (an array of provider names)',
    );
  });
});

describe('config documents', () => {
  test('opsConfigProblems names each missing or mistyped field', () => {
    expect(opsConfigProblems(config('x'))).toEqual([]);
    expect(opsConfigProblems([])).toEqual(['is not a JSON object']);
    expect(opsConfigProblems({ ...config('x'), workQueueUrl: '', bodyBucket: 3 })).toEqual(['workQueueUrl is missing', 'bodyBucket is not a string']);
    expect(opsConfigProblems({ ...config('x'), resultRetentionSeconds: 2_592_000 })).toEqual([]);
    for (const resultRetentionSeconds of ['30d', 0, 1.5]) {
      expect(opsConfigProblems({ ...config('x'), resultRetentionSeconds })).toEqual(['resultRetentionSeconds is not a positive whole number of seconds']);
    }
  });

  test('endpointProblems accepts the documented services and a region only', () => {
    expect(endpointProblems(undefined)).toEqual([]);
    expect(
      endpointProblems({
        dynamodb: 'http://127.0.0.1:8000',
        sqs: 'http://127.0.0.1:9324',
        s3: 'http://127.0.0.1:9324',
        lambda: 'http://127.0.0.1:3001',
        region: 'us-east-1',
      }),
    ).toEqual([]);
    expect(endpointProblems({ dynamo: 'http://127.0.0.1:8000', sqs: 'localhost:9324', region: '' })).toEqual([
      'endpoints.dynamo is not one of dynamodb, sqs, s3, lambda, region',
      'endpoints.sqs is not an http(s) URL',
      'endpoints.region is not a region name',
    ]);
  });

  test('loadConfigFile reads an OpsConfig with endpoints; a bad file is a usage error naming it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'webhook-inbox-config-'));
    const good = join(dir, 'good.json');
    writeFileSync(good, JSON.stringify({ ...config('twin'), endpoints: { dynamodb: 'http://127.0.0.1:8000' } }));
    expect(loadConfigFile(good)).toEqual({ ...config('twin'), endpoints: { dynamodb: 'http://127.0.0.1:8000' } });

    const broken = join(dir, 'broken.json');
    writeFileSync(broken, '{');
    expect(() => loadConfigFile(broken)).toThrow(UsageError);
    expect(() => loadConfigFile(broken)).toThrow(`--config ${broken} is not JSON`);
    expect(() => loadConfigFile(join(dir, 'absent.json'))).toThrow(`cannot read --config ${join(dir, 'absent.json')}`);
    const partial = join(dir, 'partial.json');
    writeFileSync(partial, JSON.stringify({ inboxName: 'x', endpoints: { sqs: 'nope' } }));
    expect(() => loadConfigFile(partial)).toThrow(/inboxTable is missing; .*reconcilerFunctionName is missing; .*endpoints.sqs is not an http\(s\) URL/);
  });
});

describe('adapterKindOf: how inspect reads a provider’s jobs', () => {
  test('the OpsConfig’s map first, else a provider named after its preset', () => {
    const withMap = { ...config('x'), providers: ['answerline', 'billing', 'custom'], adapters: { billing: 'stripe' } };
    expect(adapterKindOf(withMap, 'answerline')).toBe('answerline');
    expect(adapterKindOf(withMap, 'billing')).toBe('stripe');
    expect(adapterKindOf(withMap, 'custom')).toBeUndefined();
    expect(adapterKindOf(config('x'), 'echonova')).toBe('echonova');
  });
});

describe('the command line', () => {
  test.each([
    [['status', '--stack', 'S', '--bogus'], "Unknown option '--bogus'"],
    [['launch', '--stack', 'S'], 'unknown command: launch'],
    [['status', '--stack', 'S', '--force'], 'status does not take --force'],
    [['redrive', '--stack', 'S', 'extra'], 'redrive: unexpected argument extra'],
    [['inspect', '--stack', 'S'], 'inspect needs the event'],
    [['help', 'launch'], 'unknown command: launch'],
  ])('%j is a usage error', (argv, message) => {
    expect(() => parseCommandLine(argv)).toThrow(UsageError);
    expect(() => parseCommandLine(argv)).toThrow(message);
  });

  test('help in three spellings', () => {
    expect(parseCommandLine([]).values.help).toBe(true);
    expect(parseCommandLine(['help', 'replay'])).toMatchObject({ command: 'replay', values: { help: true } });
    expect(parseCommandLine(['replay', '-h'])).toMatchObject({ command: 'replay', values: { help: true } });
  });
});

/** Runs the CLI in-process with captured output. */
async function runCli(argv: string[], overrides: Partial<Parameters<typeof run>[1]> = {}) {
  let stdout = '';
  let stderr = '';
  const code = await run(argv, { io: { stdout: (text) => (stdout += text), stderr: (text) => (stderr += text) }, ...overrides });
  return { code, stdout, stderr };
}

describe('run: exit codes and messages of config resolution', () => {
  const cfn = mockClient(CloudFormationClient);
  const client = new CloudFormationClient({ region: 'eu-west-1' });
  /** Clients that must never be used: resolution fails before any command runs. */
  const noClients = (): OpsClients => {
    throw new Error('no clients expected');
  };
  afterEach(() => cfn.reset());
  afterAll(() => cfn.restore());

  test('--help prints the usage and the exit codes, exit 0; a command’s help documents its Scan', async () => {
    const help = await runCli(['--help']);
    expect(help).toMatchObject({ code: 0, stderr: '' });
    expect(help.stdout).toContain('Usage: webhook-inbox <command>');
    expect(help.stdout).toContain('2 usage error');
    for (const command of ['replay', 'quarantine', 'status']) {
      const text = (await runCli([command, '--help'])).stdout;
      expect(text).toContain('Scan');
      expect(text.replace(/\s+/g, ' ')).toContain('never a per-delivery or scheduled path');
    }
  });

  test('usage errors exit 2 with a pointer to --help', async () => {
    for (const argv of [
      ['status'],
      ['status', '--stack', 'S', '--config', 'c.json'],
      ['status', '--config', 'c.json', '--inbox', 'X'],
      ['redrive', '--stack', 'S', '--limit', '0'],
      ['replay', '--stack', 'S', '--event', 'nohash'],
      ['replay', '--stack', 'S', '--from', '2026-01-01'],
    ]) {
      const result = await runCli(argv, { cloudFormation: () => client, clients: noClients });
      expect(result).toMatchObject({ code: 2, stdout: '' });
      expect(result.stderr).toMatch(/^webhook-inbox: .*\nRun 'webhook-inbox --help' for usage\.\n$/);
    }
  });

  test('no such stack: exit 1, naming the stack and the region', async () => {
    cfn.on(DescribeStacksCommand).rejects(Object.assign(new Error('Stack with id Nope does not exist'), { name: 'ValidationError' }));
    const result = await runCli(['status', '--stack', 'Nope'], { cloudFormation: () => client, clients: noClients });
    expect(result).toEqual({
      code: 1,
      stdout: '',
      stderr: 'webhook-inbox: no such stack: Nope (region eu-west-1; set --region or AWS_REGION if it is elsewhere)\n',
    });
  });

  test('a stack without inbox output: exit 1; several inboxes without --inbox: exit 2', async () => {
    cfn.on(DescribeStacksCommand, { StackName: 'Plain' }).resolves({ Stacks: [{ StackName: 'Plain', Outputs: unrelated } as never] });
    cfn.on(DescribeStacksCommand, { StackName: 'Two' }).resolves({
      Stacks: [{ StackName: 'Two', Outputs: [inboxOutput('Two/A', config('a')), inboxOutput('Two/B', config('b'))] } as never],
    });
    const plain = await runCli(['status', '--stack', 'Plain'], { cloudFormation: () => client, clients: noClients });
    expect(plain.code).toBe(1);
    expect(plain.stderr).toContain('stack Plain has no output described');
    const two = await runCli(['status', '--stack', 'Two'], { cloudFormation: () => client, clients: noClients });
    expect(two.code).toBe(2);
    expect(two.stderr).toContain('stack Two has 2 inboxes (Two/A, Two/B): choose one with --inbox');
  });

  test('--stack resolves the inbox’s OpsConfig and hands it to the command', async () => {
    cfn.on(DescribeStacksCommand, { StackName: 'Two' }).resolves({
      Stacks: [{ StackName: 'Two', Outputs: [inboxOutput('Two/A', config('a')), inboxOutput('Two/B', config('b'))] } as never],
    });
    const seen: unknown[] = [];
    // The command's first request shows which inbox it acts on; failing it ends the run (exit 1).
    const clients = (): OpsClients =>
      ({
        sqs: { send: async (command: { input: unknown }) => (seen.push(command.input), Promise.reject(new Error('stop here'))) },
        dynamodb: { send: async () => Promise.reject(new Error('stop here')) },
      }) as unknown as OpsClients;
    const result = await runCli(['redrive', '--stack', 'Two', '--inbox', 'B'], { cloudFormation: () => client, clients });
    // An error not the CLI's own is said with its message: the operator is the CLI's own user.
    expect(result).toMatchObject({ code: 1, stderr: 'webhook-inbox: Error: stop here\n' });
    expect(seen).toEqual([expect.objectContaining({ QueueUrl: config('b').deadLetterQueueUrl })]);
  });
});
