/**
 * The twin's front door routes as an HTTP API routes (the most specific route key wins: literal
 * segments over `{param}` over `{proxy+}`, the method's own route over `ANY`, `$default` only when
 * nothing else matches) and hands the integration a payload format 2.0 event.
 */
import { request } from 'node:http';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { ApiRoute, httpApiEvent, matchRoute, startApiGateway } from '../../../src/aws/apigateway/http-api';

/** Routes that answer nothing: only which one is picked matters. */
function routes(...routeKeys: string[]): ApiRoute[] {
  return routeKeys.map((routeKey) => ({ routeKey, invoke: () => Promise.resolve({ statusCode: 200 }) }));
}

/** The route key picked for `method path`, and the path parameters it filled. */
function picked(routeKeys: string[], method: string, path: string): { routeKey?: string; pathParameters?: Record<string, string> } {
  const matched = matchRoute(routes(...routeKeys), method, path);
  return { routeKey: matched?.route.routeKey, pathParameters: matched?.pathParameters };
}

describe('matchRoute', () => {
  test('a literal segment beats a path parameter, in either order', () => {
    for (const order of [
      ['GET /items/{id}', 'GET /items/latest'],
      ['GET /items/latest', 'GET /items/{id}'],
    ]) {
      expect(picked(order, 'GET', '/items/latest')).toEqual({ routeKey: 'GET /items/latest', pathParameters: undefined });
      expect(picked(order, 'GET', '/items/42')).toEqual({ routeKey: 'GET /items/{id}', pathParameters: { id: '42' } });
    }
  });

  test('a path parameter beats a greedy one; the greedy one takes the rest of the path', () => {
    const keys = ['ANY /{proxy+}', 'GET /items/{id}', 'GET /items/{id}/{part+}'];
    expect(picked(keys, 'GET', '/items/42')).toEqual({ routeKey: 'GET /items/{id}', pathParameters: { id: '42' } });
    expect(picked(keys, 'GET', '/items/42/parts/7')).toEqual({ routeKey: 'GET /items/{id}/{part+}', pathParameters: { id: '42', part: 'parts/7' } });
    expect(picked(keys, 'GET', '/orders/9')).toEqual({ routeKey: 'ANY /{proxy+}', pathParameters: { proxy: 'orders/9' } });
  });

  test("the method's own route beats ANY on the same path", () => {
    const keys = ['ANY /hooks/{provider}', 'POST /hooks/{provider}'];
    expect(picked(keys, 'POST', '/hooks/stripe').routeKey).toBe('POST /hooks/{provider}');
    expect(picked(keys, 'PUT', '/hooks/stripe').routeKey).toBe('ANY /hooks/{provider}');
  });

  test('a route of another method does not match', () => {
    expect(picked(['POST /hooks/stripe'], 'GET', '/hooks/stripe').routeKey).toBeUndefined();
  });

  test('$default is taken only when no other route matches, wherever it is listed', () => {
    const keys = ['$default', 'POST /hooks/{provider}'];
    expect(picked(keys, 'POST', '/hooks/github').routeKey).toBe('POST /hooks/{provider}');
    expect(picked(keys, 'GET', '/hooks/github').routeKey).toBe('$default');
    expect(picked(keys, 'POST', '/elsewhere').routeKey).toBe('$default');
  });

  test('nothing matches: no route', () => {
    expect(matchRoute(routes('POST /hooks/{provider}'), 'POST', '/hooks')).toBeUndefined();
    expect(matchRoute(routes('POST /hooks/{provider}'), 'POST', '/hooks/stripe/extra')).toBeUndefined();
    // A greedy parameter needs at least one segment: the root is not under `/{proxy+}`.
    expect(matchRoute(routes('ANY /{proxy+}'), 'GET', '/')).toBeUndefined();
  });

  test('path parameters arrive percent-decoded', () => {
    expect(picked(['GET /items/{id}'], 'GET', '/items/caf%C3%A9%20au%20lait').pathParameters).toEqual({ id: 'café au lait' });
    expect(picked(['GET /files/{path+}'], 'GET', '/files/a%20b/c%2Fd').pathParameters).toEqual({ path: 'a b/c/d' });
  });

  test('a segment that is not valid percent-encoding is passed as sent, not thrown', () => {
    expect(picked(['GET /items/{id}'], 'GET', '/items/100%').pathParameters).toEqual({ id: '100%' });
    expect(picked(['GET /files/{path+}'], 'GET', '/files/%E0%A4%A/x').pathParameters).toEqual({ path: '%E0%A4%A/x' });
  });
});

describe('httpApiEvent', () => {
  const base = { path: '/items/42', headers: { 'content-type': 'application/json', host: 'api.local' }, body: Buffer.from('{"a":1}') };

  test('carries the method, route key, path and request id', () => {
    const event = httpApiEvent({ ...base, method: 'PUT', routeKey: 'PUT /items/{id}', requestId: 'req-1', pathParameters: { id: '42' } });
    expect(event).toMatchObject({
      version: '2.0',
      routeKey: 'PUT /items/{id}',
      rawPath: '/items/42',
      pathParameters: { id: '42' },
      body: '{"a":1}',
      isBase64Encoded: false,
      requestContext: {
        http: { method: 'PUT', path: '/items/42' },
        requestId: 'req-1',
        routeKey: 'PUT /items/{id}',
        domainName: 'api.local',
        stage: '$default',
      },
    });
  });

  test('defaults to POST on the path, with a fresh request id each time', () => {
    const [first, second] = [httpApiEvent(base), httpApiEvent(base)];
    expect(first.routeKey).toBe('POST /items/42');
    expect(first.requestContext.http.method).toBe('POST');
    expect(first.requestContext.requestId).not.toBe(second.requestContext.requestId);
    expect(first.pathParameters).toBeUndefined();
  });

  test('query string parameters: decoded, a repeated one joined with commas, the raw string kept', () => {
    const rawQueryString = 'tag=a&page=2&tag=b&q=caf%C3%A9&tag=c';
    const event = httpApiEvent({ ...base, rawQueryString });
    expect(event.rawQueryString).toBe(rawQueryString);
    expect(event.queryStringParameters).toEqual({ tag: 'a,b,c', page: '2', q: 'café' });
  });

  test('no query string: no queryStringParameters', () => {
    const event = httpApiEvent(base);
    expect(event.rawQueryString).toBe('');
    expect(event.queryStringParameters).toBeUndefined();
  });

  test('a body of a type that is not text arrives base64-encoded', () => {
    const bytes = Buffer.from([0x00, 0xff, 0x10]);
    const event = httpApiEvent({ ...base, headers: { 'content-type': 'application/octet-stream' }, body: bytes });
    expect(event).toMatchObject({ body: bytes.toString('base64'), isBase64Encoded: true });
  });
});

describe('the front door', () => {
  test('a request reaches the matched route as its event, and an undecodable path is still answered', async () => {
    const events: APIGatewayProxyEventV2[] = [];
    const api = await startApiGateway({
      apiId: 'api123',
      routes: [{ routeKey: 'GET /items/{id}', invoke: (event) => (events.push(event), Promise.resolve({ statusCode: 200, body: 'ok' })) }],
    });
    const get = (path: string) =>
      new Promise<{ status: number; requestId: string }>((resolve, reject) => {
        request(`${api.url}${path}`, { headers: { 'x-trace': ['one', 'two'] } }, (res) =>
          resolve({ status: res.resume().statusCode!, requestId: String(res.headers['apigw-requestid']) }),
        )
          .on('error', reject)
          .end();
      });
    try {
      const answered = await get('/items/caf%C3%A9?tag=a&tag=b');
      expect(answered.status).toBe(200);
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({
        routeKey: 'GET /items/{id}',
        pathParameters: { id: 'café' },
        queryStringParameters: { tag: 'a,b' },
        headers: { 'x-trace': 'one,two' },
        requestContext: { apiId: 'api123', requestId: answered.requestId, http: { method: 'GET' } },
      });
      expect((await get('/items/100%')).status).toBe(200);
      expect(events[1].pathParameters).toEqual({ id: '100%' });
      expect((await get('/nowhere')).status).toBe(404);
    } finally {
      await api.stop();
    }
  });
});
