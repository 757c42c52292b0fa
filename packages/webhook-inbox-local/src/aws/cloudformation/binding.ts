/**
 * What each logical id of a stack stands for locally: a physical name, its `Ref` value and the
 * `Fn::GetAtt` attributes CloudFormation would give it, computed the way CloudFormation names
 * resources (the template's own name when it sets one, else one derived from the stack and the
 * logical id). Values that only exist once a resource is created locally (a queue's URL, a
 * secret's ARN, an API's endpoint) are set when it is.
 */
import { createHash } from 'node:crypto';
import { RESOURCE_NAMES } from '../../../../../lib/contract';
import { constructPath, StackTemplate, TemplateResource } from './assembly';
import { BoundResource, pseudoParameters, resolveIntrinsics, resolveString, TemplateBinding, UnresolvableError } from './intrinsics';
import { placed, TemplateError, TemplatePlace } from './template-error';

/**
 * Values of a resource that only exist once the local resource is created (a queue's URL, a
 * secret's ARN with its random suffix), by type: `Ref` and attribute names. A name cannot be built
 * from them before then.
 */
const KNOWN_ONCE_CREATED: Readonly<Record<string, readonly string[]>> = {
  'AWS::SQS::Queue': ['Ref', 'QueueUrl'],
  'AWS::SecretsManager::Secret': ['Ref', 'Id'],
};

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
    for (const logicalId of Object.keys(template.Resources)) this.bind(logicalId, []);
  }

  /** What a logical id stands for. */
  get(logicalId: string): BoundResource {
    const bound = this.resources[logicalId];
    if (!bound) throw new UnresolvableError(`${this.stackName} has no resource ${logicalId}`, { stackName: this.stackName });
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
    return {
      resources: this.resources,
      pseudo: this.pseudo,
      fallback: (logicalId, attribute) => {
        throw this.unbound(logicalId, attribute);
      },
    };
  }

  /** Where a resource is, as a TemplateError names it: this stack, its logical id, type and construct path, and `property`. */
  place(logicalId: string, property?: string): TemplatePlace {
    const resource = this.template.Resources[logicalId];
    return {
      stackName: this.stackName,
      logicalId,
      ...(resource ? { type: resource.Type } : {}),
      ...(resource?.Metadata?.['aws:cdk:path'] !== undefined ? { constructPath: constructPath(this, logicalId, resource!) } : {}),
      ...(property !== undefined ? { property } : {}),
    };
  }

  /** Runs `work`; a TemplateError it throws is placed in this stack, with its resource's type and construct path. */
  placed<T>(work: () => T): T {
    try {
      return work();
    } catch (error) {
      if (error instanceof TemplateError) error.at(error.place.logicalId === undefined ? { stackName: this.stackName } : this.place(error.place.logicalId));
      throw error;
    }
  }

  /** A resource's properties, resolved. */
  resolveProperties(logicalId: string): Record<string, unknown> {
    return this.resolveProperty(logicalId, undefined) as Record<string, unknown>;
  }

  /** The property at `path` (keys joined by dots: `Integration.Uri`) of a resource, resolved; undefined where the template has none. */
  resolveProperty(logicalId: string, path: string | undefined): unknown {
    const keys = path === undefined ? [] : path.split('.');
    const value = keys.reduce<unknown>((at, key) => (at as Record<string, unknown> | undefined)?.[key], this.template.Resources[logicalId]?.Properties ?? {});
    return placed(this.place(logicalId, path), () => resolveIntrinsics(value, this.binding()));
  }

  /** A property that must resolve to text. */
  resolvePropertyText(logicalId: string, path: string): string {
    const value = this.resolveProperty(logicalId, path);
    if (typeof value !== 'string') throw new UnresolvableError(`expected text, got ${JSON.stringify(value)}`, this.place(logicalId, path));
    return value;
  }

  /** An output's value, resolved to text. */
  resolveOutput(key: string): string {
    return placed({ stackName: this.stackName, output: key, property: 'Value' }, () => resolveString(this.template.Outputs?.[key]?.Value, this.binding()));
  }

  /**
   * Binds a resource, after those its name is built from: CloudFormation creates a resource after
   * the resources it references, so a log group named after a function's `Ref` has its name once
   * the function has its own. `naming` holds the resources whose names wait on this one.
   */
  private bind(logicalId: string, naming: readonly string[]): BoundResource | undefined {
    const resource = this.template.Resources[logicalId];
    if (this.resources[logicalId] || !resource) return this.resources[logicalId];
    // Placed where it is found: at the name that closes the cycle.
    if (naming.includes(logicalId)) throw new UnresolvableError(`names built from each other: ${[...naming, logicalId].join(' → ')}`);
    const bound = placed(this.place(logicalId), () => this.initial(logicalId, resource, [...naming, logicalId]));
    this.resources[logicalId] = bound;
    return bound;
  }

  /** A reference nothing local answers, with the type of the resource it names: the twin gives some types no attributes. */
  private unbound(logicalId: string, attribute: string | undefined): UnresolvableError {
    const type = this.template.Resources[logicalId]?.Type;
    const reference = attribute === undefined ? `${logicalId} (Ref)` : `${logicalId}.${attribute} (Fn::GetAtt)`;
    return new UnresolvableError(`nothing local stands for ${reference}${type ? `: the twin gives a resource of type ${type} no ${attribute ?? 'Ref'}` : ''}`);
  }

  /** What a name is built from: parameters, pseudo parameters and the other resources, each bound first. */
  private namingBinding(naming: readonly string[]): TemplateBinding {
    return {
      resources: {},
      pseudo: this.pseudo,
      fallback: (logicalId, attribute) => {
        const bound = this.parameters[logicalId] ?? this.bind(logicalId, naming);
        const value = attribute === undefined ? bound?.ref : bound?.attributes?.[attribute];
        if (value === undefined) throw this.unbound(logicalId, attribute);
        const type = this.template.Resources[logicalId]?.Type ?? '';
        if (KNOWN_ONCE_CREATED[type]?.includes(attribute ?? 'Ref')) {
          throw new UnresolvableError(`it is named after ${logicalId}'s ${attribute ?? 'Ref'}, which the twin only knows once it has created ${logicalId}`);
        }
        return value;
      },
    };
  }

  private initial(logicalId: string, resource: TemplateResource, naming: readonly string[]): BoundResource {
    const { account, region } = this;
    const name = this.physicalName(logicalId, resource, naming);
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
      case 'AWS::Events::Rule': {
        // A rule on a bus of its own is named under that bus.
        const bus = resource.Properties?.EventBusName;
        const onBus = bus === undefined ? 'default' : this.nameFrom(bus, 'EventBusName', naming).replace(/^arn:.*:event-bus\//, '');
        return { ref: name, attributes: { Arn: `arn:aws:events:${region}:${account}:rule/${onBus === 'default' ? '' : `${onBus}/`}${name}` } };
      }
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

  private physicalName(logicalId: string, resource: TemplateResource, naming: readonly string[]): string {
    const rule = RESOURCE_NAMES[resource.Type];
    const own = rule && resource.Properties?.[rule.property];
    if (own !== undefined) return this.nameFrom(own, rule.property, naming);
    // CloudFormation names a secret `<logical id>-<12 characters>` (the inbox's handlers rebuild its ARN from that); anything else `<stack>-<logical id>`.
    if (resource.Type === 'AWS::SecretsManager::Secret') return `${logicalId}-${digest(`${this.stackName}/${logicalId}`, 12)}`;
    const generated = `${this.stackName}-${logicalId}`;
    const fifo = resource.Type === 'AWS::SQS::Queue' && resource.Properties?.FifoQueue === true ? '.fifo' : '';
    // The suffix is part of the limit: fitting the name to what is left keeps its digest whole.
    const maxLength = (rule?.maxLength ?? 255) - fifo.length;
    const fitted = generated.length <= maxLength ? generated : `${generated.slice(0, maxLength - 9)}-${digest(generated, 8)}`;
    return rule?.lowerCase ? `${fitted}${fifo}`.toLowerCase().replace(/[^a-z0-9.-]/g, '-') : `${fitted}${fifo}`;
  }

  /** A property a name is built from, resolved with what it references bound first. */
  private nameFrom(value: unknown, property: string, naming: readonly string[]): string {
    return placed({ property }, () => resolveString(value, this.namingBinding(naming)));
  }
}

function digest(text: string, length: number): string {
  return createHash('sha256').update(text).digest('hex').slice(0, length);
}
