import * as acm from 'aws-cdk-lib/aws-certificatemanager';
import * as route53 from 'aws-cdk-lib/aws-route53';

/** Which API Gateway API receives the deliveries. */
export enum WebhookIngressType {
  /** An HTTP API (API Gateway v2) with a Lambda proxy integration, payload format 2.0. */
  HTTP_API = 'HTTP_API',
  /** A REST API (API Gateway v1) with a Lambda proxy integration; the one of the two AWS WAF attaches to. */
  REST_API = 'REST_API',
}

/**
 * Whether a REST API ingress's stage writes access logs. A REST API stage logs to CloudWatch Logs
 * only once the account's API Gateway CloudWatch role is set in its region (an account-wide
 * setting, `AWS::ApiGateway::Account`); in an account without one, a stage that asks for logs
 * fails to deploy. An HTTP API needs no such setting and always writes access logs.
 */
export enum RestApiAccessLogging {
  /** No access log: the stage needs no account setting and deploys in any account; the verifier still writes a delivery record of each request it receives. */
  NONE = 'NONE',
  /** JSON access logs to the inbox's `AccessLogs` log group; the account's API Gateway CloudWatch role in the stack's region is already set (`aws apigateway get-account`), or the deploy fails. */
  EXISTING_ACCOUNT_ROLE = 'EXISTING_ACCOUNT_ROLE',
  /**
   * JSON access logs, and the inbox sets the account's API Gateway CloudWatch role in the stack's
   * region to a role it creates (`AWS::ApiGateway::Account`, replacing any role set before; both are
   * kept when the stack is deleted, so other APIs go on logging). One stack per account and region
   * should set it.
   */
  CREATE_ACCOUNT_ROLE = 'CREATE_ACCOUNT_ROLE',
}

/** A custom domain name providers post to instead of the API's own `execute-api` host. */
export interface WebhookIngressDomain {
  /** The domain name, e.g. `hooks.example.com`. */
  readonly domainName: string;

  /** An ACM certificate for `domainName`, in the stack's region (the domain's endpoint is regional). */
  readonly certificate: acm.ICertificate;

  /**
   * A public hosted zone to create an alias `A` record for `domainName` in.
   * @default - no record: point `domainName` at the `DomainTarget` output yourself
   */
  readonly hostedZone?: route53.IHostedZone;
}

/** Options of the HTTP API ingress. */
export interface HttpApiIngressOptions {
  /**
   * A custom domain, mapped to the API's `$default` stage.
   * @default - the API's own `execute-api` URL only
   */
  readonly domain?: WebhookIngressDomain;
}

/** Options of the REST API ingress. */
export interface RestApiIngressOptions {
  /**
   * The ARN of an AWS WAF web ACL (scope `REGIONAL`, in the stack's region) associated with the API's stage.
   * @default - no web ACL
   */
  readonly webAclArn?: string;

  /**
   * A custom domain, mapped to the API's stage at its root.
   * @default - the API's own `execute-api` URL only
   */
  readonly domain?: WebhookIngressDomain;

  /**
   * Whether the stage writes access logs, and where the account-wide CloudWatch role they need comes from (docs/DEPLOY.md#prerequisites).
   * @default RestApiAccessLogging.NONE
   */
  readonly accessLogging?: RestApiAccessLogging;
}

/**
 * The front door of an inbox: an HTTP API (the default), or a REST API, the API Gateway API that
 * AWS WAF can protect. Either one serves `POST /hooks/<name>` per provider with the same
 * throttling, and hands the verifier the same bytes and headers.
 */
export class WebhookIngress {
  /** An HTTP API (API Gateway v2) with a throttled, access-logged `$default` stage. */
  public static httpApi(options: HttpApiIngressOptions = {}): WebhookIngress {
    return new WebhookIngress(WebhookIngressType.HTTP_API, options.domain, undefined, undefined);
  }

  /**
   * A REST API (API Gateway v1) with a throttled `prod` stage, access-logged when `accessLogging`
   * says so, every body passed to the verifier base64-encoded (binary media type `*` / `*`),
   * optionally behind an AWS WAF web ACL.
   */
  public static restApi(options: RestApiIngressOptions = {}): WebhookIngress {
    return new WebhookIngress(WebhookIngressType.REST_API, options.domain, options.webAclArn, options.accessLogging ?? RestApiAccessLogging.NONE);
  }

  /** Which API receives the deliveries. */
  public readonly type: WebhookIngressType;
  /** The custom domain, when one is set. */
  public readonly domain?: WebhookIngressDomain;
  /** The web ACL associated with the REST API's stage, when one is set. */
  public readonly webAclArn?: string;
  /** Whether the REST API's stage writes access logs; undefined for an HTTP API, which always does. */
  public readonly restApiAccessLogging?: RestApiAccessLogging;

  private constructor(
    type: WebhookIngressType,
    domain: WebhookIngressDomain | undefined,
    webAclArn: string | undefined,
    restApiAccessLogging: RestApiAccessLogging | undefined,
  ) {
    this.type = type;
    this.domain = domain;
    this.webAclArn = webAclArn;
    this.restApiAccessLogging = restApiAccessLogging;
  }
}
