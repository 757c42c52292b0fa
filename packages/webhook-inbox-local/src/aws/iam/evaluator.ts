/**
 * Decides one access as IAM would, with `@cloud-copilot/iam-simulate` (an IAM policy simulator:
 * identity and resource policies, explicit deny, every condition operator, action and
 * resource-type validation against AWS's own service data). It is AGPL-3.0, so it is used only
 * here, by the tests and the local twin: never bundled into `assets/`, never required by `lib/`,
 * and loaded only when a gateway is made, so that the twin runs (without judging) where it is not
 * installed (an optional peer of the companion package). What it covers and what it does not:
 * docs/IAM-ENFORCEMENT.md.
 */
import { createHash } from 'node:crypto';
import type * as IamSimulate from '@cloud-copilot/iam-simulate';
import type { AccessRequest } from './aws-requests';
import type { NamedPolicy, PolicyDocument } from './template-policies';

/** A role as the evaluator knows it: its ARN, its identity policies, and the resource policies of the template it comes from. */
export interface PolicyPrincipal {
  readonly arn: string;
  readonly policies: readonly NamedPolicy[];
  /** By the ARN of the resource each protects. */
  readonly resourcePolicies: ReadonlyMap<string, PolicyDocument>;
}

export type Decision =
  { readonly allowed: true } | { readonly allowed: false; readonly explicit: boolean; readonly policyType: 'identity' | 'resource'; readonly invalid?: string };

/** Context keys every request carries here as it would in Lambda (the SDK reaches AWS over TLS). */
const GLOBAL_CONTEXT = { 'aws:SecureTransport': 'true' } as const;

const SIMULATOR = '@cloud-copilot/iam-simulate';

/** The simulator, or undefined when it is not installed. */
export function loadIamSimulator(): typeof IamSimulate | undefined {
  try {
    return require('@cloud-copilot/iam-simulate') as typeof IamSimulate;
  } catch (error) {
    // Only its own absence: a simulator that is installed but fails to load is an error to see.
    if ((error as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND' && (error as Error).message.includes(`'${SIMULATOR}'`)) return undefined;
    throw error;
  }
}

export class PolicyEvaluator {
  private readonly simulator: typeof IamSimulate;
  /**
   * Decisions by principal, policies and access: two registrations may share a role ARN (the same
   * logical id in two templates) yet not their policies, and the same role registered again (a
   * handler built anew) shares its decisions.
   */
  private readonly cache = new Map<string, Promise<Decision>>();
  /** Each principal's ARN and policies, as one digest. */
  private readonly fingerprints = new WeakMap<PolicyPrincipal, string>();
  /** Condition keys each principal's policies (and any resource policy) refer to, lower-cased. */
  private readonly referencedKeys = new WeakMap<PolicyPrincipal, Set<string>>();

  constructor(private readonly account: string) {
    const simulator = loadIamSimulator();
    if (!simulator) throw new Error(`IAM is judged by ${SIMULATOR}, which is not installed: npm install --save-dev ${SIMULATOR}`);
    this.simulator = simulator;
  }

  /** Whether any policy this principal is judged by reads the condition key. */
  refersTo(principal: PolicyPrincipal, conditionKey: string): boolean {
    return this.keysOf(principal).has(conditionKey.toLowerCase());
  }

  decide(principal: PolicyPrincipal, access: AccessRequest): Promise<Decision> {
    // A condition key no statement reads cannot change the decision: leave it out of the cache key.
    const keys = this.keysOf(principal);
    const context: Record<string, string | string[]> = { ...GLOBAL_CONTEXT, 'aws:PrincipalArn': principal.arn, 'aws:PrincipalAccount': this.account };
    for (const [name, value] of Object.entries(access.context)) if (keys.has(name.toLowerCase())) context[name] = value;
    const cacheKey = JSON.stringify([this.fingerprintOf(principal), access.action, access.resource, context]);
    let decision = this.cache.get(cacheKey);
    if (!decision) {
      decision = this.simulate(principal, access, context);
      this.cache.set(cacheKey, decision);
    }
    return decision;
  }

  private async simulate(principal: PolicyPrincipal, access: AccessRequest, context: Record<string, string | string[]>): Promise<Decision> {
    const resourcePolicy = resourcePolicyFor(principal, access.resource, this.account);
    const result = await this.simulator.runSimulation(
      {
        request: {
          principal: principal.arn,
          action: access.action,
          resource: { resource: access.resource, accountId: this.account },
          contextVariables: context,
        },
        identityPolicies: principal.policies.map((policy) => ({ name: policy.name, policy: policy.document })),
        serviceControlPolicies: [],
        resourceControlPolicies: [],
        ...(resourcePolicy ? { resourcePolicy } : {}),
      },
      {},
    );
    if (result.resultType === 'error') {
      // An action AWS does not have, or a resource of the wrong type for it: AWS refuses it too.
      return { allowed: false, explicit: false, policyType: 'identity', invalid: JSON.stringify(result.errors) };
    }
    if (result.overallResult === 'Allowed') return { allowed: true };
    const analysis = result.resultType === 'single' ? result.result.analysis : undefined;
    const reasons = analysis ? this.simulator.getDenialReasons(analysis) : [];
    const explicit = result.overallResult === 'ExplicitlyDenied';
    const byResource = reasons.some((reason) => reason.denialType === (explicit ? 'Explicit' : 'Implicit') && reason.policyType === 'resource');
    return { allowed: false, explicit, policyType: explicit && byResource ? 'resource' : 'identity' };
  }

  private fingerprintOf(principal: PolicyPrincipal): string {
    let fingerprint = this.fingerprints.get(principal);
    if (fingerprint === undefined) {
      const policies = JSON.stringify([principal.arn, principal.policies, [...principal.resourcePolicies]]);
      fingerprint = createHash('sha256').update(policies).digest('base64');
      this.fingerprints.set(principal, fingerprint);
    }
    return fingerprint;
  }

  private keysOf(principal: PolicyPrincipal): Set<string> {
    let keys = this.referencedKeys.get(principal);
    if (!keys) {
      keys = new Set();
      const documents = [...principal.policies.map((policy) => policy.document), ...principal.resourcePolicies.values()];
      for (const document of documents) {
        for (const statement of document.Statement) {
          for (const operands of Object.values(statement.Condition ?? {})) for (const key of Object.keys(operands)) keys.add(key.toLowerCase());
        }
      }
      this.referencedKeys.set(principal, keys);
    }
    return keys;
  }
}

/**
 * The resource policy of the resource, or of the bucket an object is in. A KMS key always has one
 * (KMS allows nothing its key policy does not): a key the template does not define is taken to
 * have the default key policy, which lets the account's IAM policies decide.
 */
function resourcePolicyFor(principal: PolicyPrincipal, resource: string, account: string): PolicyDocument | undefined {
  const exact = principal.resourcePolicies.get(resource);
  if (exact) return exact;
  if (resource.startsWith('arn:aws:s3:::')) return principal.resourcePolicies.get(resource.split('/')[0]);
  if (/^arn:aws:kms:[^:]+:\d{12}:key\//.test(resource)) return defaultKeyPolicy(account);
  return undefined;
}

/** The key policy KMS gives a key created without one: the account's root may do anything, so IAM policies decide. */
function defaultKeyPolicy(account: string): PolicyDocument {
  return {
    Version: '2012-10-17',
    Statement: [{ Sid: 'Enable IAM User Permissions', Effect: 'Allow', Principal: { AWS: `arn:aws:iam::${account}:root` }, Action: 'kms:*', Resource: '*' }],
  };
}
