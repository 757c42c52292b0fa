/**
 * The rule checked here, stated on its own: whichever API Gateway API received a request, the
 * verifier sees the same request: the body's exact bytes, header names in lower case with a
 * repeated header's values joined by commas (as an HTTP API joins them), the method, the path
 * without a stage, the query string, the sender's address. The events are AWS's documented
 * examples of each payload format, copied field by field (not built by code under test), with
 * only the path moved to a hook's.
 */
import type { APIGatewayProxyEvent, APIGatewayProxyEventV2 } from 'aws-lambda';
import { parseIngressEvent } from '../../../../lambda/shared/runtime/http';

const MAX = 1024 * 1024;

/**
 * The REST API proxy event of the API Gateway Developer Guide ("Input format of a Lambda function
 * for proxy integration"), its `resource`, `path` and `pathParameters` moved to `/hooks/answerline`.
 * Its `multiValueHeaders` keep the documented nameless entry.
 */
function documentedRestEvent(): APIGatewayProxyEvent {
  return {
    resource: '/hooks/{provider}',
    path: '/hooks/answerline',
    httpMethod: 'POST',
    headers: {
      Accept: '*/*',
      'Accept-Encoding': 'gzip, deflate',
      'cache-control': 'no-cache',
      'CloudFront-Forwarded-Proto': 'https',
      'CloudFront-Is-Desktop-Viewer': 'true',
      'CloudFront-Is-Mobile-Viewer': 'false',
      'CloudFront-Is-SmartTV-Viewer': 'false',
      'CloudFront-Is-Tablet-Viewer': 'false',
      'CloudFront-Viewer-Country': 'US',
      'Content-Type': 'application/json',
      headerName: 'headerValue',
      Host: 'gy415nuibc.execute-api.us-east-1.amazonaws.com',
      'Postman-Token': '9f583ef0-ed83-4a38-aef3-eb9ce3f7a57f',
      'User-Agent': 'PostmanRuntime/2.4.5',
      Via: '1.1 d98420743a69852491bbdea73f7680bd.cloudfront.net (CloudFront)',
      'X-Amz-Cf-Id': 'pn-PWIJc6thYnZm5P0NMgOUglL1DYtl0gdeJky8tqsg8iS_sgsKD1A==',
      'X-Forwarded-For': '54.240.196.186, 54.182.214.83',
      'X-Forwarded-Port': '443',
      'X-Forwarded-Proto': 'https',
    },
    multiValueHeaders: {
      Accept: ['*/*'],
      'Accept-Encoding': ['gzip, deflate'],
      'cache-control': ['no-cache'],
      'CloudFront-Forwarded-Proto': ['https'],
      'CloudFront-Is-Desktop-Viewer': ['true'],
      'CloudFront-Is-Mobile-Viewer': ['false'],
      'CloudFront-Is-SmartTV-Viewer': ['false'],
      'CloudFront-Is-Tablet-Viewer': ['false'],
      'CloudFront-Viewer-Country': ['US'],
      '': [''],
      'Content-Type': ['application/json'],
      headerName: ['headerValue'],
      Host: ['gy415nuibc.execute-api.us-east-1.amazonaws.com'],
      'Postman-Token': ['9f583ef0-ed83-4a38-aef3-eb9ce3f7a57f'],
      'User-Agent': ['PostmanRuntime/2.4.5'],
      Via: ['1.1 d98420743a69852491bbdea73f7680bd.cloudfront.net (CloudFront)'],
      'X-Amz-Cf-Id': ['pn-PWIJc6thYnZm5P0NMgOUglL1DYtl0gdeJky8tqsg8iS_sgsKD1A=='],
      'X-Forwarded-For': ['54.240.196.186, 54.182.214.83'],
      'X-Forwarded-Port': ['443'],
      'X-Forwarded-Proto': ['https'],
    },
    queryStringParameters: { name: 'me', multivalueName: 'me' },
    multiValueQueryStringParameters: { name: ['me'], multivalueName: ['you', 'me'] },
    pathParameters: { provider: 'answerline' },
    stageVariables: { stageVariableName: 'stageVariableValue' },
    requestContext: {
      accountId: '12345678912',
      resourceId: 'roq9wj',
      stage: 'testStage',
      requestId: 'deef4878-7910-11e6-8f14-25afc3e9ae33',
      identity: {
        cognitoIdentityPoolId: null,
        accountId: null,
        cognitoIdentityId: null,
        caller: null,
        apiKey: null,
        sourceIp: '192.168.196.186',
        cognitoAuthenticationType: null,
        cognitoAuthenticationProvider: null,
        userArn: null,
        userAgent: 'PostmanRuntime/2.4.5',
        user: null,
      },
      resourcePath: '/hooks/{provider}',
      httpMethod: 'POST',
      apiId: 'gy415nuibc',
    },
    body: '{\r\n\t"a": 1\r\n}',
    isBase64Encoded: false,
  } as unknown as APIGatewayProxyEvent;
}

/**
 * The HTTP API event of the API Gateway Developer Guide ("Working with AWS Lambda proxy
 * integrations for HTTP APIs", payload format 2.0), its paths moved to `/hooks/answerline`.
 */
function documentedHttpEvent(): APIGatewayProxyEventV2 {
  return {
    version: '2.0',
    routeKey: 'POST /hooks/answerline',
    rawPath: '/hooks/answerline',
    rawQueryString: 'parameter1=value1&parameter1=value2&parameter2=value',
    cookies: ['cookie1', 'cookie2'],
    headers: { header1: 'value1', header2: 'value1,value2' },
    queryStringParameters: { parameter1: 'value1,value2', parameter2: 'value' },
    requestContext: {
      accountId: '123456789012',
      apiId: 'api-id',
      domainName: 'id.execute-api.us-east-1.amazonaws.com',
      domainPrefix: 'id',
      http: { method: 'POST', path: '/hooks/answerline', protocol: 'HTTP/1.1', sourceIp: '192.0.2.1', userAgent: 'agent' },
      requestId: 'id',
      routeKey: 'POST /hooks/answerline',
      stage: '$default',
      time: '12/Mar/2020:19:03:58 +0000',
      timeEpoch: 1583348638390,
    },
    body: 'Hello from Lambda',
    pathParameters: { parameter1: 'value1' },
    isBase64Encoded: false,
    stageVariables: { stageVariable1: 'value1', stageVariable2: 'value2' },
  };
}

describe('the REST API proxy event AWS documents', () => {
  const parsed = parseIngressEvent(documentedRestEvent(), MAX);
  const request = parsed.ok ? parsed.request : undefined;

  test('is read as a REST API event: method, path without stage, source address, request id', () => {
    expect(parsed.ok).toBe(true);
    expect(request).toMatchObject({
      provider: 'answerline',
      method: 'POST',
      path: '/hooks/answerline',
      sourceIp: '192.168.196.186',
      requestId: 'deef4878-7910-11e6-8f14-25afc3e9ae33',
    });
  });

  test('its body arrives byte for byte, CRLF and tab included', () => {
    expect(request!.body.equals(Buffer.from([0x7b, 0x0d, 0x0a, 0x09, 0x22, 0x61, 0x22, 0x3a, 0x20, 0x31, 0x0d, 0x0a, 0x7d]))).toBe(true);
  });

  test('its headers arrive with lower-case names and their values as sent; the nameless entry is no header', () => {
    expect(request!.headers).toEqual({
      accept: '*/*',
      'accept-encoding': 'gzip, deflate',
      'cache-control': 'no-cache',
      'cloudfront-forwarded-proto': 'https',
      'cloudfront-is-desktop-viewer': 'true',
      'cloudfront-is-mobile-viewer': 'false',
      'cloudfront-is-smarttv-viewer': 'false',
      'cloudfront-is-tablet-viewer': 'false',
      'cloudfront-viewer-country': 'US',
      'content-type': 'application/json',
      headername: 'headerValue',
      host: 'gy415nuibc.execute-api.us-east-1.amazonaws.com',
      'postman-token': '9f583ef0-ed83-4a38-aef3-eb9ce3f7a57f',
      'user-agent': 'PostmanRuntime/2.4.5',
      via: '1.1 d98420743a69852491bbdea73f7680bd.cloudfront.net (CloudFront)',
      'x-amz-cf-id': 'pn-PWIJc6thYnZm5P0NMgOUglL1DYtl0gdeJky8tqsg8iS_sgsKD1A==',
      'x-forwarded-for': '54.240.196.186, 54.182.214.83',
      'x-forwarded-port': '443',
      'x-forwarded-proto': 'https',
    });
  });

  test('its query string keeps every value of a repeated parameter, in order', () => {
    expect(request!.rawQueryString).toBe('name=me&multivalueName=you&multivalueName=me');
  });
});

describe('the same request in both shapes', () => {
  /** The HTTP API's documented request, as a REST API would have passed it (every body base64-encoded under `*` / `*`). */
  function asRestEvent(): APIGatewayProxyEvent {
    const http = documentedHttpEvent();
    return {
      ...documentedRestEvent(),
      headers: { Header1: 'value1', Header2: 'value2' },
      multiValueHeaders: { Header1: ['value1'], Header2: ['value1', 'value2'] },
      queryStringParameters: { parameter1: 'value2', parameter2: 'value' },
      multiValueQueryStringParameters: { parameter1: ['value1', 'value2'], parameter2: ['value'] },
      requestContext: {
        ...documentedRestEvent().requestContext,
        requestId: 'id',
        identity: { ...documentedRestEvent().requestContext.identity, sourceIp: '192.0.2.1' },
      },
      body: Buffer.from(http.body!, 'utf8').toString('base64'),
      isBase64Encoded: true,
    };
  }

  test('gives the verifier the same request: headers joined as the HTTP API joins them, the same query, body, method, path and address', () => {
    const fromHttp = parseIngressEvent(documentedHttpEvent(), MAX);
    const fromRest = parseIngressEvent(asRestEvent(), MAX);
    expect(fromHttp.ok && fromRest.ok).toBe(true);
    if (!fromHttp.ok || !fromRest.ok) return;
    expect(fromRest.request.headers).toEqual({ header1: 'value1', header2: 'value1,value2' });
    expect(fromRest.request).toEqual(fromHttp.request);
    expect(fromRest.request.body.toString('utf8')).toBe('Hello from Lambda');
  });

  test('a body over the limit is refused in either shape, measured in decoded bytes', () => {
    const limit = Buffer.byteLength('Hello from Lambda');
    expect(parseIngressEvent(asRestEvent(), limit).ok).toBe(true);
    expect(parseIngressEvent(documentedHttpEvent(), limit).ok).toBe(true);
    expect(parseIngressEvent(asRestEvent(), limit - 1)).toMatchObject({ ok: false, reason: 'too_large', provider: 'answerline' });
    expect(parseIngressEvent(documentedHttpEvent(), limit - 1)).toMatchObject({ ok: false, reason: 'too_large', provider: 'answerline' });
  });

  test('a REST API event for a path that is no hook is an unknown provider, as an HTTP API event is', () => {
    expect(parseIngressEvent({ ...asRestEvent(), path: '/hello/world' }, MAX)).toMatchObject({ ok: false, reason: 'unknown_provider' });
    expect(parseIngressEvent({ ...documentedHttpEvent(), rawPath: '/hello/world' }, MAX)).toMatchObject({ ok: false, reason: 'unknown_provider' });
  });

  test('a direct invocation’s REST API event without multiValueHeaders or body still parses: headers from `headers`, no body', () => {
    const bare = { ...asRestEvent(), multiValueHeaders: undefined, body: null, isBase64Encoded: false } as unknown as APIGatewayProxyEvent;
    const parsed = parseIngressEvent(bare, MAX);
    expect(parsed.ok && parsed.request.headers).toEqual({ header1: 'value1', header2: 'value2' });
    expect(parsed.ok && parsed.request.body.length).toBe(0);
  });
});
