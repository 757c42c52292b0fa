/**
 * A refused AWS call as CloudTrail records it: the fields an operator reads in the record of an
 * `AccessDenied` (who, which action of which service, on what, and AWS's message). The twin prints
 * one per denial as it happens, where AWS would write it to the account's trail.
 */
import type { Denial } from './gateway';

export interface TrailRecord {
  readonly eventTime: string;
  readonly eventSource: string;
  readonly eventName: string;
  readonly awsRegion: string;
  readonly userIdentity: {
    readonly type: 'AssumedRole';
    readonly arn: string;
    readonly sessionContext: { readonly sessionIssuer: { readonly type: 'Role'; readonly arn: string } };
  };
  readonly errorCode: 'AccessDenied';
  readonly errorMessage: string;
  readonly resources: readonly { readonly ARN: string }[];
}

/** Services whose CloudTrail event source is not `<action prefix>.amazonaws.com`. */
const EVENT_SOURCES: Readonly<Record<string, string>> = { cloudwatch: 'monitoring.amazonaws.com' };

export function trailRecordOf(denial: Denial, region: string): TrailRecord {
  const service = denial.action.split(':')[0];
  return {
    eventTime: denial.at,
    eventSource: EVENT_SOURCES[service] ?? `${service}.amazonaws.com`,
    eventName: denial.operation,
    awsRegion: region,
    userIdentity: { type: 'AssumedRole', arn: denial.sessionArn, sessionContext: { sessionIssuer: { type: 'Role', arn: denial.roleArn } } },
    errorCode: 'AccessDenied',
    errorMessage: denial.message,
    resources: denial.resource === '*' ? [] : [{ ARN: denial.resource }],
  };
}
