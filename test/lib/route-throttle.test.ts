/**
 * Each provider's route is throttled on its own, stated as rules on the template: an HTTP API
 * stage names every route in its route settings, a REST API stage every method in its method
 * settings; a route's allowance is its provider's `throttle`, else the inbox's, else an even share
 * of the account's quota; allowances that cannot all be honoured under the account's quota are
 * refused at synth, naming the prop.
 */
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { WebhookInbox, WebhookInboxProps, WebhookIngress, WebhookProvider } from '../../lib';

function templateOf(props: WebhookInboxProps): Template {
  const stack = new Stack(new App(), 'Test', { env: { account: '111111111111', region: 'eu-west-1' } });
  new WebhookInbox(stack, 'Inbox', props);
  return Template.fromStack(stack);
}

function only(template: Template, type: string): any {
  const resources = Object.values(template.findResources(type));
  expect(resources).toHaveLength(1);
  return resources[0];
}

/** The HTTP API stage's throttle of each route key, as API Gateway reads it. */
function httpRouteThrottles(template: Template): Record<string, [number, number]> {
  const settings = only(template, 'AWS::ApiGatewayV2::Stage').Properties.RouteSettings as Record<string, any>;
  return Object.fromEntries(Object.entries(settings).map(([key, value]) => [key, [value.ThrottlingRateLimit, value.ThrottlingBurstLimit]]));
}

/** The REST API stage's throttle of each method (`<method> <path>`; API Gateway's `/~1hooks~1x` is `/hooks/x`), the stage's `/*` default aside. */
function restMethodThrottles(template: Template): Record<string, [number, number]> {
  const settings = only(template, 'AWS::ApiGateway::Stage').Properties.MethodSettings as any[];
  return Object.fromEntries(
    settings
      .filter((setting) => setting.ResourcePath !== '/*')
      .map((setting) => [
        `${setting.HttpMethod} ${String(setting.ResourcePath).slice(1).replace(/~1/g, '/')}`,
        [setting.ThrottlingRateLimit, setting.ThrottlingBurstLimit],
      ]),
  );
}

const providers = [WebhookProvider.answerline(), WebhookProvider.echonova({ throttle: { rateLimit: 50, burstLimit: 100 } }), WebhookProvider.meta()];

describe('each provider route has its own throttle', () => {
  test('HTTP API: every route key in the stage route settings; the provider’s own throttle, or an even share of what the account’s quota leaves', () => {
    const template = templateOf({ providers: providers });
    // Account 10,000 rps / 5,000 burst; echonova takes 50 / 100; the three other routes share the rest, at most 1,000 / 2,000 each.
    expect(httpRouteThrottles(template)).toEqual({
      'POST /hooks/answerline': [1000, 1633],
      'POST /hooks/echonova': [50, 100],
      'POST /hooks/meta': [1000, 1633],
      'GET /hooks/meta': [1000, 1633],
    });
    // API Gateway refuses settings of a route it does not have yet: the stage waits for every route.
    const stage = Object.entries(template.findResources('AWS::ApiGatewayV2::Stage'))[0][1];
    const routes = Object.keys(template.findResources('AWS::ApiGatewayV2::Route'));
    expect(routes).toHaveLength(4);
    expect(stage.DependsOn).toEqual(expect.arrayContaining(routes));
  });

  test('REST API: every method in the stage method settings, beside the stage default', () => {
    const template = templateOf({ providers: providers, ingress: WebhookIngress.restApi(), throttle: { rateLimit: 200, burstLimit: 400 } });
    expect(restMethodThrottles(template)).toEqual({
      'POST /hooks/answerline': [200, 400],
      'POST /hooks/echonova': [50, 100],
      'POST /hooks/meta': [200, 400],
      'GET /hooks/meta': [200, 400],
    });
    const stageDefault = (only(template, 'AWS::ApiGateway::Stage').Properties.MethodSettings as any[]).find((setting) => setting.ResourcePath === '/*');
    expect([stageDefault.ThrottlingRateLimit, stageDefault.ThrottlingBurstLimit]).toEqual([200, 400]);
  });

  test('the default of a lone provider is 1,000 requests a second and bursts of 2,000; forty share the account evenly', () => {
    expect(httpRouteThrottles(templateOf({}))).toEqual({ 'POST /hooks/answerline': [1000, 2000] });
    const forty = Array.from({ length: 40 }, (_, i) => WebhookProvider.stripe({ name: `stripe-${i}` }));
    const throttles = Object.values(httpRouteThrottles(templateOf({ providers: forty })));
    expect(throttles).toHaveLength(40);
    expect(new Set(throttles.map((throttle) => throttle.join('/')))).toEqual(new Set(['250/125']));
  });

  test('a declared account quota is what the share divides', () => {
    const forty = Array.from({ length: 40 }, (_, i) => WebhookProvider.stripe({ name: `stripe-${i}` }));
    const throttles = httpRouteThrottles(templateOf({ providers: forty, accountThrottle: { rateLimit: 40_000, burstLimit: 20_000 } }));
    expect(throttles['POST /hooks/stripe-7']).toEqual([1000, 500]);
  });
});

describe('throttles the account cannot honour are refused at synth, naming the prop', () => {
  test('a route allowed more than the account’s quota', () => {
    expect(() => templateOf({ providers: [WebhookProvider.answerline({ throttle: { rateLimit: 12_000, burstLimit: 100 } })] })).toThrow(
      /providers\["answerline"\]\.throttle\.rateLimit \(POST \/hooks\/answerline\): must be at most the account's 10,000 requests a second \(accountThrottle\), got 12000/,
    );
    expect(() => templateOf({ throttle: { rateLimit: 100, burstLimit: 5_001 } })).toThrow(
      /throttle\.burstLimit \(POST \/hooks\/answerline\): must be at most the account's 5,000 requests of burst \(accountThrottle\), got 5001/,
    );
  });

  test('allowances that add up to more than the account’s quota: one route’s flood could get the others 429s', () => {
    const many = Array.from({ length: 11 }, (_, i) => WebhookProvider.stripe({ name: `stripe-${i}` }));
    expect(() => templateOf({ providers: many, throttle: { rateLimit: 1000, burstLimit: 100 } })).toThrow(
      /throttle: the 11 routes' rateLimits add up to 11,000 requests a second, more than the account's 10,000 \(accountThrottle\)/,
    );
    // Declaring the raised quota accepts them.
    expect(() => templateOf({ providers: many, throttle: { rateLimit: 1000, burstLimit: 100 }, accountThrottle: { rateLimit: 11_000 } })).not.toThrow();
  });

  test('a burst that is no whole number, a rate of 0, an account quota of 0', () => {
    expect(() => templateOf({ throttle: { rateLimit: 0, burstLimit: 1.5 } })).toThrow(
      /throttle\.rateLimit \(POST \/hooks\/answerline\): must be above 0, got 0[\s\S]*throttle\.burstLimit \(POST \/hooks\/answerline\): must be a whole number above 0, got 1\.5/,
    );
    expect(() => templateOf({ accountThrottle: { rateLimit: 0 } })).toThrow(/accountThrottle\.rateLimit: must be above 0, got 0/);
  });
});
