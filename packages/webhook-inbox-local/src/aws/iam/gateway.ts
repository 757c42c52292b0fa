/**
 * An HTTP gateway in front of the local AWS emulators and stand-ins that enforces IAM the way
 * AWS does: the caller is named by the access key id of its SigV4 signature (each function runs
 * with the credentials of its own role), every access the request needs is decided against that
 * role's policies from the synthesized template (and the resource's own policy), and a request
 * that is not allowed is answered with the service's own AccessDenied error, so the SDK raises
 * exactly what it raises in AWS. Allowed requests are forwarded untouched.
 *
 * Operators (the twin's provisioning, a test reading state back, the ops CLI) use access keys
 * listed as `operatorKeys`: their requests are forwarded without evaluation, as an
 * administrator's would be allowed. Any other unknown key is refused as AWS refuses it.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, IncomingMessage, request as httpRequest, Server, ServerResponse } from 'node:http';
import { DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { closeServer, listenOnLoopback, readBody } from '../loopback';
import { AccessRequest, credentialOf, LocalScope, mapRequest, Protocol, ServiceName, WireRequest } from './aws-requests';
import { Decision, PolicyEvaluator, PolicyPrincipal } from './evaluator';
import type { NamedPolicy, PolicyDocument } from './template-policies';

/** What the gateway asks of the secrets it judges requests for (the Secrets Manager stand-in knows both). */
export interface SecretDirectory {
  /** The ARN of a secret named by name or ARN; undefined when it does not exist. */
  arnOf(secretId: string): string | undefined;
  /** The KMS key a secret is encrypted with (a key ARN or id); undefined for the AWS managed key. */
  kmsKeyOf(secretId: string): string | undefined;
}

export interface IamGatewayOptions {
  /** Where each service really is (more can be added with `useUpstream`). */
  readonly upstreams?: Partial<Record<ServiceName, string>>;
  readonly account: string;
  readonly region: string;
  /** The secrets requests name (more can be given with `useSecrets`). */
  readonly secrets?: SecretDirectory;
  /** Access key ids forwarded without evaluation. */
  readonly operatorKeys?: readonly string[];
}

/** A principal as registered: a role of a template, under a name for reports. */
export interface GatewayPrincipal {
  /** What reports call it, e.g. `verifier`. */
  readonly name: string;
  readonly roleArn: string;
  readonly policies: readonly NamedPolicy[];
  readonly resourcePolicies?: ReadonlyMap<string, PolicyDocument>;
}

export interface LocalCredentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
}

/** One refused request, as the reports and the tests read it. */
export interface Denial {
  readonly principal: string;
  readonly operation: string;
  readonly action: string;
  readonly resource: string;
  readonly message: string;
  /** When it was refused, ISO 8601. */
  readonly at: string;
  /** The role's ARN, and the assumed-role session the call was signed as (the function's). */
  readonly roleArn: string;
  readonly sessionArn: string;
}

interface Registered extends PolicyPrincipal {
  readonly name: string;
}

export class IamGateway {
  readonly denials: Denial[] = [];
  /** Requests evaluated (and allowed or refused) per principal name. */
  readonly evaluated = new Map<string, number>();
  private readonly principals = new Map<string, Registered>();
  private readonly evaluator: PolicyEvaluator;
  private readonly operators: ReadonlySet<string>;
  private readonly schemas = new Map<string, Promise<TableKeys | undefined>>();
  private readonly upstreams = new Map<ServiceName, string>();
  private readonly denialListeners: ((denial: Denial) => void)[] = [];
  private secrets?: SecretDirectory;
  private dynamodb?: DynamoDBClient;
  private server?: Server;

  constructor(private readonly options: IamGatewayOptions) {
    this.evaluator = new PolicyEvaluator(options.account);
    this.operators = new Set(options.operatorKeys ?? []);
    this.secrets = options.secrets;
    for (const [service, url] of Object.entries(options.upstreams ?? {}) as [ServiceName, string][]) this.useUpstream(service, url);
  }

  /** Where requests of a service go from now on. */
  useUpstream(service: ServiceName, url: string): void {
    this.upstreams.set(service, url);
    if (service === 'dynamodb') {
      this.dynamodb?.destroy();
      this.dynamodb = new DynamoDBClient({
        endpoint: url,
        region: this.options.region,
        credentials: { accessKeyId: 'iam-gateway', secretAccessKey: 'iam-gateway' },
      });
    }
  }

  /** Where secrets are looked up from now on (their ARNs, their KMS keys). */
  useSecrets(secrets: SecretDirectory): void {
    this.secrets = secrets;
  }

  /** Registers a role; requests signed with the returned credentials are judged by its policies. */
  register(principal: GatewayPrincipal): LocalCredentials {
    const accessKeyId = `AKIA${randomBytes(8).toString('hex').toUpperCase()}`;
    this.principals.set(accessKeyId, {
      name: principal.name,
      arn: principal.roleArn,
      policies: principal.policies,
      resourcePolicies: principal.resourcePolicies ?? new Map(),
    });
    return { accessKeyId, secretAccessKey: randomBytes(20).toString('base64') };
  }

  /** Hands every later refusal to `listener` as it is answered (a twin reports them as they happen). */
  onDenial(listener: (denial: Denial) => void): void {
    this.denialListeners.push(listener);
  }

  /** Refusals, optionally of one principal. */
  denialsOf(principal?: string): Denial[] {
    return this.denials.filter((denial) => principal === undefined || denial.principal === principal);
  }

  async start(port = 0): Promise<string> {
    this.server = createServer((req, res) => {
      void this.handle(req, res).catch((error: unknown) => {
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
        res.end(`local IAM gateway: ${(error as Error).message}`);
      });
    });
    return listenOnLoopback(this.server, port);
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await closeServer(this.server);
    this.dynamodb?.destroy();
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const request: WireRequest = { method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers, body: await readBody(req) };
    const credential = credentialOf(request);
    const service = credential?.service as ServiceName | undefined;
    const upstream = service && this.upstreams.get(service);
    if (!credential || !upstream) {
      res.writeHead(400, { 'content-type': 'text/plain' }).end('local IAM gateway: an unsigned request, or a service with no upstream here');
      return;
    }
    if (this.operators.has(credential.accessKeyId)) return forward(request, upstream, res);
    const principal = this.principals.get(credential.accessKeyId);
    const mapped = await mapRequest(service, request, this.scopeFor(principal));
    const protocol: Protocol = mapped?.protocol ?? (service === 's3' ? 's3' : 'json');
    if (!principal) return refuse(res, protocol, request, 'unrecognized', 'The security token included in the request is invalid.');
    this.evaluated.set(principal.name, (this.evaluated.get(principal.name) ?? 0) + 1);
    if (!mapped || mapped.accesses.length === 0) {
      const operation = mapped?.operation || `${service}:?`;
      return this.deny(res, request, principal, protocol, operation, { action: `${service}:${operation}`, resource: '*', context: {} }, undefined);
    }
    for (const access of mapped.accesses) {
      const decision = await this.evaluator.decide(principal, access);
      if (!decision.allowed) return this.deny(res, request, principal, protocol, mapped.operation, access, decision);
    }
    return forward(request, upstream, res);
  }

  private deny(
    res: ServerResponse,
    request: WireRequest,
    principal: Registered,
    protocol: Protocol,
    operation: string,
    access: AccessRequest,
    decision: Exclude<Decision, { allowed: true }> | undefined,
  ): void {
    const because = !decision
      ? 'because the local IAM gateway does not understand this request (docs/IAM-ENFORCEMENT.md)'
      : decision.invalid
        ? `because the request is not valid for this action (${decision.invalid})`
        : decision.explicit
          ? `with an explicit deny in a${decision.policyType === 'resource' ? ' resource-based' : 'n identity-based'} policy`
          : `because no identity-based policy allows the ${access.action} action`;
    const role = principal.arn.split('/').pop();
    const sessionArn = `arn:aws:sts::${this.options.account}:assumed-role/${role}/${principal.name}`;
    const message = `User: ${sessionArn} is not authorized to perform: ${access.action} on resource: ${access.resource} ${because}`;
    const denial: Denial = {
      principal: principal.name,
      operation,
      action: access.action,
      resource: access.resource,
      message,
      at: new Date().toISOString(),
      roleArn: principal.arn,
      sessionArn,
    };
    this.denials.push(denial);
    for (const listener of this.denialListeners) listener(denial);
    refuse(res, protocol, request, 'denied', message);
  }

  private scopeFor(principal: Registered | undefined): LocalScope {
    return {
      account: this.options.account,
      region: this.options.region,
      secretArn: (id) => this.secrets?.arnOf(id),
      secretKmsKey: (id) => this.secrets?.kmsKeyOf(id),
      partitionKeyOf: (table, index) => this.partitionKeyOf(table, index),
      needsLeadingKeys: principal !== undefined && this.evaluator.refersTo(principal, 'dynamodb:LeadingKeys'),
      needsAttributes: principal !== undefined && this.evaluator.refersTo(principal, 'dynamodb:Attributes'),
    };
  }

  private async partitionKeyOf(table: string, index?: string): Promise<string | undefined> {
    let schema = this.schemas.get(table);
    if (!schema) {
      schema = describeKeys(this.dynamodb, table);
      this.schemas.set(table, schema);
    }
    const keys = await schema;
    return index === undefined ? keys?.table : keys?.indexes[index];
  }
}

interface TableKeys {
  readonly table: string;
  readonly indexes: Readonly<Record<string, string>>;
}

async function describeKeys(client: DynamoDBClient | undefined, table: string): Promise<TableKeys | undefined> {
  const out = await client?.send(new DescribeTableCommand({ TableName: table })).catch(() => undefined);
  const description = out?.Table;
  if (!description) return undefined;
  const hashOf = (schema: { AttributeName?: string; KeyType?: string }[] | undefined) => schema?.find((key) => key.KeyType === 'HASH')?.AttributeName ?? '';
  return {
    table: hashOf(description.KeySchema),
    indexes: Object.fromEntries(
      [...(description.GlobalSecondaryIndexes ?? []), ...(description.LocalSecondaryIndexes ?? [])].map((index) => [
        index.IndexName ?? '',
        hashOf(index.KeySchema),
      ]),
    ),
  };
}

/** Headers that describe this hop, not the request; the body is re-sent whole. */
const HOP_HEADERS = new Set(['connection', 'keep-alive', 'expect', 'transfer-encoding', 'host', 'content-length']);

function forward(request: WireRequest, upstream: string, res: ServerResponse): Promise<void> {
  const target = new URL(request.url, upstream);
  const headers = Object.fromEntries(Object.entries(request.headers).filter(([name]) => !HOP_HEADERS.has(name)));
  return new Promise((resolve, reject) => {
    const out = httpRequest(
      target,
      { method: request.method, headers: { ...headers, host: target.host, 'content-length': String(request.body.length) } },
      (upstreamResponse) => {
        res.writeHead(upstreamResponse.statusCode ?? 502, upstreamResponse.headers);
        upstreamResponse.pipe(res);
        upstreamResponse.on('end', resolve);
        upstreamResponse.on('error', reject);
      },
    );
    out.on('error', reject);
    out.end(request.body);
  });
}

/** The service's own error for a refused request: `denied` (AccessDenied) or `unrecognized` (an unknown access key). */
function refuse(res: ServerResponse, protocol: Protocol, request: WireRequest, kind: 'denied' | 'unrecognized', message: string): void {
  const requestId = randomUUID();
  const head = request.method.toUpperCase() === 'HEAD';
  switch (protocol) {
    case 's3': {
      const code = kind === 'denied' ? 'AccessDenied' : 'InvalidAccessKeyId';
      const xml = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${escapeXml(message)}</Message><RequestId>${requestId}</RequestId><HostId>local</HostId></Error>`;
      res.writeHead(403, { 'content-type': 'application/xml', 'x-amz-request-id': requestId }).end(head ? undefined : xml);
      return;
    }
    case 'sqs-query': {
      const code = kind === 'denied' ? 'AccessDenied' : 'InvalidClientTokenId';
      const xml = `<?xml version="1.0"?><ErrorResponse><Error><Type>Sender</Type><Code>${code}</Code><Message>${escapeXml(message)}</Message></Error><RequestId>${requestId}</RequestId></ErrorResponse>`;
      res.writeHead(403, { 'content-type': 'text/xml', 'x-amzn-requestid': requestId }).end(xml);
      return;
    }
    case 'sqs-json': {
      const code = kind === 'denied' ? 'AccessDenied' : 'InvalidClientTokenId';
      res
        .writeHead(kind === 'denied' ? 403 : 400, {
          'content-type': 'application/x-amz-json-1.0',
          'x-amzn-requestid': requestId,
          'x-amzn-query-error': `${code};Sender`,
        })
        .end(JSON.stringify({ __type: `com.amazon.coral.service#${kind === 'denied' ? 'AccessDeniedException' : 'InvalidClientTokenId'}`, message }));
      return;
    }
    case 'rest-json': {
      const type = kind === 'denied' ? 'AccessDeniedException' : 'UnrecognizedClientException';
      res
        .writeHead(403, { 'content-type': 'application/json', 'x-amzn-errortype': type, 'x-amzn-requestid': requestId })
        .end(JSON.stringify({ Type: 'User', Message: message }));
      return;
    }
    case 'json': {
      const type = kind === 'denied' ? 'AccessDeniedException' : 'UnrecognizedClientException';
      res
        .writeHead(400, { 'content-type': 'application/x-amz-json-1.1', 'x-amzn-errortype': type, 'x-amzn-requestid': requestId })
        .end(JSON.stringify({ __type: `com.amazon.coral.service#${type}`, Message: message }));
    }
  }
}

function escapeXml(text: string): string {
  return text.replace(/[<>&'"]/g, (char) => `&#${char.charCodeAt(0)};`);
}
