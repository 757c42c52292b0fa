/**
 * The shipped CLI's answer to each class of AWS error, run as an operator runs it (a child process
 * with its own environment, no ~/.aws) against an HTTP server that answers as the AWS services do:
 * CloudFormation's query protocol (XML errors), DynamoDB's and SQS's JSON protocol. Each answer
 * must say what is wrong and what to do.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, IncomingMessage, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const CLI = join(__dirname, '..', '..', 'assets', 'cli', 'webhook-inbox.js');
const ACCOUNT = '123456789012';
const REGION = 'eu-west-1';
const PRINCIPAL = `arn:aws:sts::${ACCOUNT}:assumed-role/OnCall/alice`;

/** How the fake AWS answers one request: its status, headers and body. */
interface Answer {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
}
type Responder = (request: { target: string; form: URLSearchParams }) => Answer;

/** CloudFormation's error document (query protocol). */
function queryError(status: number, code: string, message: string): Answer {
  return {
    status,
    headers: { 'content-type': 'text/xml' },
    body: `<ErrorResponse xmlns="http://cloudformation.amazonaws.com/doc/2010-05-15/"><Error><Type>Sender</Type><Code>${code}</Code><Message>${message}</Message></Error><RequestId>5b2c9d3e-0000-4000-8000-000000000000</RequestId></ErrorResponse>`,
  };
}

/** A JSON-protocol error (DynamoDB, SQS). */
function jsonError(status: number, type: string, message: string): Answer {
  return {
    status,
    headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-errortype': type },
    body: JSON.stringify({ __type: `com.amazonaws.dynamodb.v20120810#${type}`, message }),
  };
}

/** A DescribeStacks answer for one stack with the given outputs. */
function stackWithOutputs(outputs: Record<string, string>): Answer {
  const members = Object.entries(outputs)
    .map(([key, value]) => `<member><OutputKey>${key}</OutputKey><OutputValue>${value}</OutputValue></member>`)
    .join('');
  return {
    status: 200,
    headers: { 'content-type': 'text/xml' },
    body:
      '<DescribeStacksResponse xmlns="http://cloudformation.amazonaws.com/doc/2010-05-15/"><DescribeStacksResult><Stacks><member>' +
      `<StackName>Shop</StackName><StackId>arn:aws:cloudformation:${REGION}:${ACCOUNT}:stack/Shop/1</StackId>` +
      `<CreationTime>2026-01-01T00:00:00Z</CreationTime><StackStatus>CREATE_COMPLETE</StackStatus><Outputs>${members}</Outputs>` +
      '</member></Stacks></DescribeStacksResult><ResponseMetadata><RequestId>1</RequestId></ResponseMetadata></DescribeStacksResponse>',
  };
}

let server: Server;
let endpoint: string;
let respond: Responder;
let home: string;

beforeAll(async () => {
  if (!existsSync(CLI)) throw new Error('assets/cli/webhook-inbox.js is missing: run `npm run bundle` first');
  home = mkdtempSync(join(tmpdir(), 'webhook-inbox-aws-errors-'));
  server = createServer((req, res) => {
    void readBody(req).then((body) => {
      const answer = respond({ target: String(req.headers['x-amz-target'] ?? ''), form: new URLSearchParams(body) });
      res.writeHead(answer.status, answer.headers).end(answer.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** An operator's shell: no AWS variable, no ~/.aws, no instance metadata; plus `extra`. */
function operatorEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('AWS_')));
  return { ...clean, HOME: home, AWS_EC2_METADATA_DISABLED: 'true', ...extra };
}

const SIGNED_IN = { AWS_ACCESS_KEY_ID: 'AKIAEXAMPLEEXAMPLE00', AWS_SECRET_ACCESS_KEY: 'secret', AWS_REGION: REGION };

function webhookInbox(env: Record<string, string>, ...args: string[]): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve) => {
    execFile(CLI, args, { env: operatorEnv(env), timeout: 30_000 }, (error, _stdout, stderr) => {
      resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stderr });
    });
  });
}

/** A --config file whose every endpoint is the fake AWS. */
function configAtFakeAws(): string {
  const path = join(home, 'ops-config.json');
  const endpoints = { dynamodb: endpoint, sqs: endpoint, s3: endpoint, lambda: endpoint, region: REGION };
  writeFileSync(
    path,
    JSON.stringify({
      inboxName: 'answers',
      inboxTable: 'Shop-InboxTable',
      resultsTable: 'Shop-ResultsTable',
      workQueueUrl: `https://sqs.${REGION}.amazonaws.com/${ACCOUNT}/Shop-Work`,
      reconcilerFunctionName: 'Shop-Reconciler',
      providers: ['answerline'],
      endpoints,
    }),
  );
  return path;
}

test('no region: says so and names --region and AWS_REGION', async () => {
  respond = () => stackWithOutputs({});
  const { AWS_REGION: _none, ...noRegion } = SIGNED_IN;
  const result = await webhookInbox({ ...noRegion, AWS_ENDPOINT_URL_CLOUDFORMATION: endpoint }, 'status', '--stack', 'Shop');
  expect(result.code).toBe(1);
  expect(result.stderr).toMatch(
    /^webhook-inbox: no valid AWS region is configured: give --region <region>, or set AWS_REGION .*\(Error: Region is missing\)$/m,
  );
  const invalid = await webhookInbox({ ...SIGNED_IN, AWS_REGION: 'eu west 1', AWS_ENDPOINT_URL_CLOUDFORMATION: endpoint }, 'status', '--stack', 'Shop');
  expect(invalid.stderr).toMatch(/^webhook-inbox: no valid AWS region is configured: .*Region not accepted/);
});

test('no credentials: names aws sso login and AWS_PROFILE', async () => {
  respond = () => stackWithOutputs({});
  const result = await webhookInbox({ AWS_REGION: REGION, AWS_ENDPOINT_URL_CLOUDFORMATION: endpoint }, 'status', '--stack', 'Shop');
  expect(result.code).toBe(1);
  expect(result.stderr).toMatch(
    /^webhook-inbox: no AWS credentials were found: sign in with `aws sso login --profile <profile>` and set AWS_PROFILE=<profile>/,
  );
  expect(result.stderr).toContain('CredentialsProviderError');
});

test('expired credentials: says they expired and how to sign in again', async () => {
  respond = () => queryError(403, 'ExpiredToken', 'The security token included in the request is expired');
  const result = await webhookInbox({ ...SIGNED_IN, AWS_ENDPOINT_URL_CLOUDFORMATION: endpoint }, 'status', '--stack', 'Shop');
  expect(result.code).toBe(1);
  expect(result.stderr).toMatch(/^webhook-inbox: AWS refused the credentials, which have expired or are not valid: sign in with `aws sso login/);
  expect(result.stderr).toContain('ExpiredToken: The security token included in the request is expired');
});

test('access denied on DescribeStacks: names the action and the resource', async () => {
  const stackArn = `arn:aws:cloudformation:${REGION}:${ACCOUNT}:stack/Shop/*`;
  respond = () =>
    queryError(
      403,
      'AccessDenied',
      `User: ${PRINCIPAL} is not authorized to perform: cloudformation:DescribeStacks on resource: ${stackArn} because no identity-based policy allows the cloudformation:DescribeStacks action`,
    );
  const result = await webhookInbox({ ...SIGNED_IN, AWS_ENDPOINT_URL_CLOUDFORMATION: endpoint }, 'status', '--stack', 'Shop');
  expect(result.code).toBe(1);
  expect(result.stderr).toMatch(
    new RegExp(`^webhook-inbox: access denied to cloudformation:DescribeStacks on ${stackArn.replace(/[*/]/g, '\\$&')}: allow it in the policy`),
  );
  expect(result.stderr).toContain(PRINCIPAL);
});

test("access denied on the inbox table (DynamoDB's JSON protocol): names the action and the table", async () => {
  const tableArn = `arn:aws:dynamodb:${REGION}:${ACCOUNT}:table/Shop-InboxTable`;
  respond = ({ target }) => {
    const action = `${target.startsWith('AmazonSQS') ? 'sqs' : 'dynamodb'}:${target.split('.')[1]}`;
    return jsonError(
      400,
      'AccessDeniedException',
      `User: ${PRINCIPAL} is not authorized to perform: ${action} on resource: ${tableArn} because no identity-based policy allows the ${action} action`,
    );
  };
  const result = await webhookInbox({}, 'inspect', '--config', configAtFakeAws(), 'answerline#tsk_1');
  expect(result.code).toBe(1);
  expect(result.stderr).toMatch(new RegExp(`^webhook-inbox: access denied to dynamodb:\\w+ on ${tableArn.replace(/\//g, '\\/')}: allow it`));
});

test('throttled: says so, after how many attempts, and what to do', async () => {
  let requests = 0;
  respond = () => {
    requests++;
    return queryError(400, 'Throttling', 'Rate exceeded');
  };
  const result = await webhookInbox({ ...SIGNED_IN, AWS_MAX_ATTEMPTS: '2', AWS_ENDPOINT_URL_CLOUDFORMATION: endpoint }, 'status', '--stack', 'Shop');
  expect(result.code).toBe(1);
  expect(requests).toBe(2);
  expect(result.stderr).toMatch(/^webhook-inbox: AWS throttled the request after 2 attempts: wait a minute and run the command again; AWS_MAX_ATTEMPTS=<n>/);
});

test('a table that does not exist: says which kind of thing is missing and what to check', async () => {
  respond = () => jsonError(400, 'ResourceNotFoundException', 'Requested resource not found');
  const result = await webhookInbox({}, 'inspect', '--config', configAtFakeAws(), 'answerline#tsk_1');
  expect(result.code).toBe(1);
  expect(result.stderr).toMatch(
    /^webhook-inbox: an AWS resource of the inbox was not found: check --region and that --stack and --inbox \(or --config\) name a deployed inbox \(ResourceNotFoundException: Requested resource not found\)/,
  );
});

test('a stack that does not exist: names it and its region', async () => {
  respond = ({ form }) => queryError(400, 'ValidationError', `Stack with id ${form.get('StackName')} does not exist`);
  const result = await webhookInbox({ ...SIGNED_IN, AWS_ENDPOINT_URL_CLOUDFORMATION: endpoint }, 'status', '--stack', 'Shopp');
  expect(result).toEqual({ code: 1, stderr: `webhook-inbox: no such stack: Shopp (region ${REGION}; set --region or AWS_REGION if it is elsewhere)\n` });
});

test('a stack without an inbox: says so', async () => {
  respond = () => stackWithOutputs({ ApiUrl: 'https://example.com' });
  const result = await webhookInbox({ ...SIGNED_IN, AWS_ENDPOINT_URL_CLOUDFORMATION: endpoint }, 'status', '--stack', 'Shop');
  expect(result.code).toBe(1);
  expect(result.stderr).toMatch(/^webhook-inbox: stack Shop has no output described "cdk-webhook-inbox ops configuration/);
});

test('an endpoint nothing listens on: says it cannot reach it', async () => {
  const path = join(home, 'closed.json');
  const closed = 'http://127.0.0.1:1';
  writeFileSync(
    path,
    JSON.stringify({
      ...JSON.parse(require('node:fs').readFileSync(configAtFakeAws(), 'utf8')),
      endpoints: { dynamodb: closed, sqs: closed, s3: closed, lambda: closed },
    }),
  );
  const result = await webhookInbox({ AWS_MAX_ATTEMPTS: '1' }, 'inspect', '--config', path, 'answerline#tsk_1');
  expect(result.code).toBe(1);
  expect(result.stderr).toMatch(
    /^webhook-inbox: cannot reach the AWS endpoint: check the network, or, with --config, that the endpoints it names \(e\.g\. the local twin\) are running/,
  );
});
