import * as acm from 'aws-cdk-lib/aws-certificatemanager';
import * as route53 from 'aws-cdk-lib/aws-route53';

/** Which API Gateway API receives the deliveries. */
export enum WebhookIngressType {
  /** An HTTP API (API Gateway v2) with a Lambda proxy integration, payload format 2.0. */
  HTTP_API = 'HTTP_API',
  /** A REST API (API Gateway v1) with a Lambda proxy integration; the one of the two AWS WAF attaches to. */
  REST_API = 'REST_API',
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
}

/**
 * The front door of an inbox: an HTTP API (the default), or a REST API, the API Gateway API that
 * AWS WAF can protect. Either one serves `POST /hooks/<name>` per provider with the same
 * throttling and access logs, and hands the verifier the same bytes and headers.
 */
export class WebhookIngress {
  /** An HTTP API (API Gateway v2) with a throttled, access-logged `$default` stage. */
  public static httpApi(options: HttpApiIngressOptions = {}): WebhookIngress {
    return new WebhookIngress(WebhookIngressType.HTTP_API, options.domain, undefined);
  }

  /**
   * A REST API (API Gateway v1) with a throttled, access-logged `prod` stage, every body passed to
   * the verifier base64-encoded (binary media type `*` / `*`), optionally behind an AWS WAF web ACL.
   */
  public static restApi(options: RestApiIngressOptions = {}): WebhookIngress {
    return new WebhookIngress(WebhookIngressType.REST_API, options.domain, options.webAclArn);
  }

  /** Which API receives the deliveries. */
  public readonly type: WebhookIngressType;
  /** The custom domain, when one is set. */
  public readonly domain?: WebhookIngressDomain;
  /** The web ACL associated with the REST API's stage, when one is set. */
  public readonly webAclArn?: string;

  private constructor(type: WebhookIngressType, domain: WebhookIngressDomain | undefined, webAclArn: string | undefined) {
    this.type = type;
    this.domain = domain;
    this.webAclArn = webAclArn;
  }
}
