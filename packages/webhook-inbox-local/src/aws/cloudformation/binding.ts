/**
 * What each logical id of a stack stands for locally: a physical name, its `Ref` value and the
 * `Fn::GetAtt` attributes CloudFormation would give it, computed the way CloudFormation names
 * resources (the template's own name when it sets one, else one derived from the stack and the
 * logical id). Values that only exist once a resource is created locally (a queue's URL, a
 * secret's ARN, an API's endpoint) are set when it is.
 */
import { createHash } from 'node:crypto';
import { RESOURCE_NAMES } from '../../../../../lib/contract';
import type { StackTemplate, TemplateResource } from './assembly';
import { BoundResource, pseudoParameters, resolveIntrinsics, resolveString, TemplateBinding, UnresolvableError } from './intrinsics';

export class StackBinding {
  private readonly resources: Record<string, BoundResource> = {};
  private readonly parameters: Record<string, BoundResource> = {};
  readonly pseudo: Readonly<Record<string, string>>;

  constructor(
    readonly stackName: string,
    readonly template: StackTemplate,
    readonly account: string,
    readonly region: string,
  ) {
    this.pseudo = pseudoParameters(account, region, stackName);
    for (const [name, parameter] of Object.entries(template.Parameters ?? {})) {
      // CDK's bootstrap version check is the only parameter a synthesized stack usually has; any
      // parameter runs with its default, as a deploy without overrides would.
      if (parameter.Default !== undefined) this.parameters[name] = { ref: String(parameter.Default) };
    }
    Object.assign(this.resources, this.parameters);
    for (const [logicalId, resource] of Object.entries(template.Resources)) this.resources[logicalId] = this.initial(logicalId, resource);
    // A rule on a bus of its own is named under that bus, which may come later in the template.
    for (const [logicalId, resource] of Object.entries(template.Resources)) {
      if (resource.Type === 'AWS::Events::Rule') this.resources[logicalId] = this.ruleOnItsBus(logicalId, resource);
    }
  }

  /** What a logical id stands for. */
  get(logicalId: string): BoundResource {
    const bound = this.resources[logicalId];
    if (!bound) throw new UnresolvableError(`${this.stackName} has no resource ${logicalId}`);
    return bound;
  }

  /** The physical name of a resource (its `Ref`, except where `Ref` is an ARN or a URL). */
  nameOf(logicalId: string): string {
    const bound = this.get(logicalId);
    return bound.attributes?.Name ?? bound.attributes?.QueueName ?? bound.ref;
  }

  /** Replaces what a logical id stands for, once the local resource exists. */
  set(logicalId: string, bound: BoundResource): void {
    this.resources[logicalId] = bound;
  }

  binding(): TemplateBinding {
    return { resources: this.resources, pseudo: this.pseudo };
  }

  resolve(value: unknown): unknown {
    return resolveIntrinsics(value, this.binding());
  }

  resolveString(value: unknown): string {
    return resolveString(value, this.binding());
  }

  private initial(logicalId: string, resource: TemplateResource): BoundResource {
    const { account, region } = this;
    const name = this.physicalName(logicalId, resource);
    switch (resource.Type) {
      case 'AWS::DynamoDB::Table': {
        const arn = `arn:aws:dynamodb:${region}:${account}:table/${name}`;
        return { ref: name, attributes: { Arn: arn, StreamArn: `${arn}/stream/local` } };
      }
      case 'AWS::SQS::Queue':
        // The URL is the emulator's, set once the queue is created.
        return { ref: name, attributes: { Arn: `arn:aws:sqs:${region}:${account}:${name}`, QueueName: name } };
      case 'AWS::S3::Bucket':
        return {
          ref: name,
          attributes: { Arn: `arn:aws:s3:::${name}`, DomainName: `${name}.s3.amazonaws.com`, RegionalDomainName: `${name}.s3.${region}.amazonaws.com` },
        };
      case 'AWS::SecretsManager::Secret':
        // Secrets Manager appends a random suffix to the ARN: set once the secret is created.
        return { ref: name, attributes: { Name: name } };
      case 'AWS::Events::EventBus':
        return { ref: name, attributes: { Arn: `arn:aws:events:${region}:${account}:event-bus/${name}`, Name: name } };
      case 'AWS::Events::Rule':
        return { ref: name, attributes: { Arn: `arn:aws:events:${region}:${account}:rule/${name}` } };
      case 'AWS::IAM::Role':
        return { ref: name, attributes: { Arn: `arn:aws:iam::${account}:role/${name}`, RoleId: `AROA${digest(name, 17).toUpperCase()}` } };
      case 'AWS::Lambda::Function':
        return { ref: name, attributes: { Arn: `arn:aws:lambda:${region}:${account}:function:${name}` } };
      case 'AWS::Logs::LogGroup':
        return { ref: name, attributes: { Arn: `arn:aws:logs:${region}:${account}:log-group:${name}:*` } };
      case 'AWS::CloudWatch::Alarm':
      case 'AWS::CloudWatch::CompositeAlarm':
        return { ref: name, attributes: { Arn: `arn:aws:cloudwatch:${region}:${account}:alarm:${name}` } };
      case 'AWS::KMS::Key': {
        // KMS names a key by a random UUID: one derived from the stack and the logical id, so a run names it alike.
        const hex = digest(`${this.stackName}/${logicalId}`, 32);
        const keyId = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
        return { ref: keyId, attributes: { Arn: `arn:aws:kms:${region}:${account}:key/${keyId}`, KeyId: keyId } };
      }
      case 'AWS::SNS::Topic': {
        const arn = `arn:aws:sns:${region}:${account}:${name}`;
        return { ref: arn, attributes: { TopicArn: arn, TopicName: name } };
      }
      case 'AWS::ApiGateway::RestApi': {
        // Its methods hang from its root resource; the endpoint is the local front door's.
        const apiId = digest(`${this.stackName}/${logicalId}`, 10);
        return { ref: apiId, attributes: { RootResourceId: `${apiId}-root` } };
      }
      case 'AWS::ApiGatewayV2::Api': {
        // The endpoint is the local front door's, set once it listens.
        const apiId = digest(`${this.stackName}/${logicalId}`, 10);
        return { ref: apiId, attributes: { ApiId: apiId } };
      }
      default:
        return { ref: name };
    }
  }

  private ruleOnItsBus(logicalId: string, resource: TemplateResource): BoundResource {
    const bound = this.resources[logicalId];
    const busProperty = resource.Properties?.EventBusName;
    if (busProperty === undefined) return bound;
    // EventBusName is a bus's name or its ARN.
    const bus = this.resolveString(busProperty).replace(/^arn:.*:event-bus\//, '');
    if (bus === 'default') return bound;
    return { ...bound, attributes: { ...bound.attributes, Arn: `arn:aws:events:${this.region}:${this.account}:rule/${bus}/${bound.ref}` } };
  }

  private physicalName(logicalId: string, resource: TemplateResource): string {
    const naming = RESOURCE_NAMES[resource.Type];
    const own = naming && resource.Properties?.[naming.property];
    if (own !== undefined) {
      // A name built from parameters and pseudo parameters only: other resources are not bound yet.
      return resolveString(own, { resources: this.parameters, pseudo: this.pseudo });
    }
    // CloudFormation names a secret `<logical id>-<12 characters>` (the inbox's handlers rebuild its ARN from that); anything else `<stack>-<logical id>`.
    if (resource.Type === 'AWS::SecretsManager::Secret') return `${logicalId}-${digest(`${this.stackName}/${logicalId}`, 12)}`;
    const generated = `${this.stackName}-${logicalId}`;
    const fifo = resource.Type === 'AWS::SQS::Queue' && resource.Properties?.FifoQueue === true ? '.fifo' : '';
    // The suffix is part of the limit: fitting the name to what is left keeps its digest whole.
    const maxLength = (naming?.maxLength ?? 255) - fifo.length;
    const fitted = generated.length <= maxLength ? generated : `${generated.slice(0, maxLength - 9)}-${digest(generated, 8)}`;
    return naming?.lowerCase ? `${fitted}${fifo}`.toLowerCase().replace(/[^a-z0-9.-]/g, '-') : `${fitted}${fifo}`;
  }
}

function digest(text: string, length: number): string {
  return createHash('sha256').update(text).digest('hex').slice(0, length);
}
