/**
 * The IAM policies a synthesized template deploys, resolved to the local resources: each role's
 * identity policies (its inline policies and every `AWS::IAM::Policy` / `AWS::IAM::ManagedPolicy`
 * attached to it), and the resource policies of queues, buckets, secrets and KMS keys. What cannot
 * be resolved is an error naming the resource and the property that holds it.
 */
import { refTarget, resolveIntrinsics, resolveString, TemplateBinding, UnresolvableError } from '../cloudformation/intrinsics';
import { placed } from '../cloudformation/template-error';

export interface PolicyStatement {
  readonly Sid?: string;
  readonly Effect: 'Allow' | 'Deny';
  readonly Action?: string | string[];
  readonly NotAction?: string | string[];
  readonly Resource?: string | string[];
  readonly NotResource?: string | string[];
  readonly Principal?: unknown;
  readonly Condition?: Record<string, Record<string, unknown>>;
}

export interface PolicyDocument {
  readonly Version?: string;
  readonly Statement: readonly PolicyStatement[];
}

export interface NamedPolicy {
  readonly name: string;
  readonly document: PolicyDocument;
}

/** The parts of a template read here. */
export interface Template {
  readonly Resources: Readonly<Record<string, { readonly Type: string; readonly Properties?: Record<string, unknown> }>>;
}

/**
 * Every identity policy of one role, resolved. A managed policy that is not in the template (an
 * AWS managed policy) is an error, unless `onOutsidePolicy` is given: it is then reported and
 * grants nothing locally, so what it would allow shows up as a denial.
 */
export function identityPoliciesOf(
  template: Template,
  roleLogicalId: string,
  binding: TemplateBinding,
  onOutsidePolicy?: (policyArn: string) => void,
): NamedPolicy[] {
  const role = template.Resources[roleLogicalId];
  if (role?.Type !== 'AWS::IAM::Role') throw new UnresolvableError('not an IAM role of the template', { logicalId: roleLogicalId });
  const managed = (role.Properties?.ManagedPolicyArns as unknown[] | undefined) ?? [];
  const policies: NamedPolicy[] = [];
  for (const [index, arn] of managed.entries()) {
    const logicalId = refTarget(arn);
    if (logicalId === undefined || template.Resources[logicalId]?.Type !== 'AWS::IAM::ManagedPolicy') {
      const place = { logicalId: roleLogicalId, property: `ManagedPolicyArns.${index}` };
      if (onOutsidePolicy) {
        onOutsidePolicy(placed(place, () => resolveString(arn, binding)));
        continue;
      }
      throw new UnresolvableError(`names a managed policy (${JSON.stringify(arn)}) whose statements are not in the template`, place);
    }
  }
  const inlinePolicies = (role.Properties?.Policies as { PolicyName: string; PolicyDocument: unknown }[] | undefined) ?? [];
  for (const [index, inline] of inlinePolicies.entries()) {
    policies.push({
      name: `${roleLogicalId}/${inline.PolicyName}`,
      document: resolveDocument(inline.PolicyDocument, binding, roleLogicalId, `Policies.${index}.PolicyDocument`),
    });
  }
  for (const [logicalId, resource] of Object.entries(template.Resources)) {
    if (resource.Type !== 'AWS::IAM::Policy' && resource.Type !== 'AWS::IAM::ManagedPolicy') continue;
    const attachedToRole = ((resource.Properties?.Roles as unknown[] | undefined) ?? []).some((entry) => refTarget(entry) === roleLogicalId);
    const listedByRole = managed.some((arn) => refTarget(arn) === logicalId);
    if (attachedToRole || listedByRole) {
      policies.push({ name: logicalId, document: resolveDocument(resource.Properties!.PolicyDocument, binding, logicalId, 'PolicyDocument') });
    }
  }
  return policies;
}

/**
 * Resource policies by the ARN of the resource they protect (statements of several policies of one
 * resource merged): queue, bucket and secret policies, and the key policy of each KMS key.
 */
export function resourcePoliciesOf(template: Template, binding: TemplateBinding): Map<string, PolicyDocument> {
  const statements = new Map<string, PolicyStatement[]>();
  const add = (arn: string, document: PolicyDocument) => statements.set(arn, [...(statements.get(arn) ?? []), ...document.Statement]);
  for (const [logicalId, resource] of Object.entries(template.Resources)) {
    const properties = resource.Properties ?? {};
    switch (resource.Type) {
      case 'AWS::KMS::Key':
        if (properties.KeyPolicy !== undefined) {
          add(arnOfReferenced({ Ref: logicalId }, binding, logicalId, 'Arn'), resolveDocument(properties.KeyPolicy, binding, logicalId, 'KeyPolicy'));
        }
        break;
      case 'AWS::SQS::QueuePolicy':
        for (const [index, queue] of (properties.Queues as unknown[]).entries()) {
          add(arnOfReferenced(queue, binding, logicalId, `Queues.${index}`), resolveDocument(properties.PolicyDocument, binding, logicalId, 'PolicyDocument'));
        }
        break;
      case 'AWS::S3::BucketPolicy':
        add(arnOfReferenced(properties.Bucket, binding, logicalId, 'Bucket'), resolveDocument(properties.PolicyDocument, binding, logicalId, 'PolicyDocument'));
        break;
      case 'AWS::SecretsManager::ResourcePolicy':
        add(
          placed({ logicalId, property: 'SecretId' }, () => resolveString(properties.SecretId, binding)),
          resolveDocument(properties.ResourcePolicy, binding, logicalId, 'ResourcePolicy'),
        );
        break;
    }
  }
  return new Map([...statements].map(([arn, merged]) => [arn, { Version: '2012-10-17', Statement: merged }]));
}

/** The ARN of a resource named by `{ Ref: X }` (its `Arn` attribute), or given as an ARN, at the property of the resource `logicalId`. */
function arnOfReferenced(value: unknown, binding: TemplateBinding, logicalId: string, property: string): string {
  const referenced = refTarget(value);
  return placed({ logicalId, property }, () => resolveString(referenced === undefined ? value : { 'Fn::GetAtt': [referenced, 'Arn'] }, binding));
}

/** A policy document, at the property of the resource `logicalId`. */
function resolveDocument(document: unknown, binding: TemplateBinding, logicalId: string, property: string): PolicyDocument {
  return placed({ logicalId, property }, () => resolveIntrinsics(document, binding) as PolicyDocument);
}
