/**
 * The providers' documented facts, restated here by hand: the figures the construct, the runtime
 * and the simulated providers all derive from them.
 */
import {
  AdapterKind,
  ALL_PROVIDER_FACTS,
  AnswerlineDelivery,
  AnswerlineLifecycle,
  attemptsOf,
  CERTIFICATE_SIGNED_ADAPTERS,
  DISCORD_REFUSAL_STATUS,
  DiscordCallbackType,
  DiscordHeaders,
  DiscordInteractionType,
  EchonovaDelivery,
  GET_CHECKED_ADAPTERS,
  LINEAR_TOLERANCE_SECONDS,
  PADDLE_PAST_TOLERANCE_SECONDS,
  POLLED_ADAPTERS,
  POLLED_ONLY_ADAPTERS,
  PollingDefaults,
  PROVIDER_REDELIVERY_SECONDS,
  retryWindowSeconds,
  SECRETLESS_ADAPTERS,
  SQUARE_SIGNATURE_HEADER,
  SlackDelivery,
  StandardWebhooksDelivery,
  URL_SIGNING_ADAPTERS,
  ZoomDelivery,
} from '../../../lib/contract';

describe('delivery schedules', () => {
  it('Answerline: 10 attempts, waits of 5 s doubling (2,555 s in all), 15 s each: 2,705 s from first attempt to last answer', () => {
    expect(attemptsOf(AnswerlineDelivery)).toBe(10);
    expect(AnswerlineDelivery.maxWaitsSeconds).toEqual([5, 10, 20, 40, 80, 160, 320, 640, 1280]);
    expect(retryWindowSeconds(AnswerlineDelivery)).toBe(2555 + 150);
  });

  it('Answerline: the horizon is 4 h of queueing, 5 min of run and the retry window', () => {
    expect(AnswerlineLifecycle.HORIZON_SECONDS).toBe(14_400 + 300 + 2_705);
    expect(PROVIDER_REDELIVERY_SECONDS[AdapterKind.ANSWERLINE]).toBe(17_405);
  });

  it('Echonova: 3 attempts, 5 s then 10 s apart, 10 s each: 45 s', () => {
    expect(attemptsOf(EchonovaDelivery)).toBe(3);
    expect(retryWindowSeconds(EchonovaDelivery)).toBe(45);
    expect(PROVIDER_REDELIVERY_SECONDS[AdapterKind.ECHONOVA]).toBe(45);
  });

  it('Standard Webhooks: 10 attempts whose worst case stays inside the documented 72 hours', () => {
    expect(attemptsOf(StandardWebhooksDelivery)).toBe(10);
    expect(retryWindowSeconds(StandardWebhooksDelivery)).toBeLessThanOrEqual(72 * 3600);
    expect(PROVIDER_REDELIVERY_SECONDS[AdapterKind.STANDARD_WEBHOOKS]).toBe(72 * 3600);
  });

  it('Shopify: 8 retries over 4 hours; Paddle: three days; PagerDuty: 5 attempts over about 20 minutes; Linear: retries after 1 min, 1 h and 6 h', () => {
    expect(PROVIDER_REDELIVERY_SECONDS[AdapterKind.SHOPIFY]).toBe(14_400);
    expect(PROVIDER_REDELIVERY_SECONDS[AdapterKind.PADDLE]).toBe(259_200);
    expect(PROVIDER_REDELIVERY_SECONDS[AdapterKind.PAGERDUTY]).toBe(1_200);
    expect(PROVIDER_REDELIVERY_SECONDS[AdapterKind.LINEAR]).toBe(60 + 3_600 + 21_600);
  });

  it("the tolerances the providers' own rules call for: Paddle's SDK accepts a ts 5 s old, Linear recommends a minute", () => {
    expect(PADDLE_PAST_TOLERANCE_SECONDS).toBe(5);
    expect(LINEAR_TOLERANCE_SECONDS).toBe(60);
  });
  it('every adapter kind has a redelivery window: three days for Stripe, GitHub and a generic HMAC sender', () => {
    expect(Object.keys(PROVIDER_REDELIVERY_SECONDS).sort()).toEqual(Object.values(AdapterKind).sort());
    for (const kind of [AdapterKind.STRIPE, AdapterKind.GITHUB, AdapterKind.HMAC]) expect(PROVIDER_REDELIVERY_SECONDS[kind]).toBe(259_200);
  });

  it('Discord: an interaction is sent once, never retried; Square: retried for up to 72 hours after its event', () => {
    expect(PROVIDER_REDELIVERY_SECONDS[AdapterKind.DISCORD]).toBe(0);
    expect(PROVIDER_REDELIVERY_SECONDS[AdapterKind.SQUARE]).toBe(259_200);
  });

  it('Twilio: a day, beyond any retry its connection overrides ask for (at most 5, seconds apart)', () => {
    expect(PROVIDER_REDELIVERY_SECONDS[AdapterKind.TWILIO]).toBe(24 * 3600);
  });

  it("Meta: the longest of its retries, WhatsApp's seven days (the Graph API's 36 hours fit inside)", () => {
    expect(PROVIDER_REDELIVERY_SECONDS[AdapterKind.META]).toBe(7 * 24 * 3600);
  });

  it('Slack: 4 attempts (nearly at once, then after 1 and 5 minutes), 3 s each: 372 s', () => {
    expect(attemptsOf(SlackDelivery)).toBe(4);
    expect(SlackDelivery.maxWaitsSeconds).toEqual([0, 60, 300]);
    expect(PROVIDER_REDELIVERY_SECONDS[AdapterKind.SLACK]).toBe(360 + 4 * 3);
  });

  it('Zoom: 4 attempts (retries 5, 20 and 60 minutes apart), 3 s each: 85 min 12 s', () => {
    expect(attemptsOf(ZoomDelivery)).toBe(4);
    expect(retryWindowSeconds(ZoomDelivery)).toBe(85 * 60 + 12);
    expect(PROVIDER_REDELIVERY_SECONDS[AdapterKind.ZOOM]).toBe(5_112);
  });
});

describe('signed requests', () => {
  it('Discord: hex Ed25519 in X-Signature-Ed25519 over X-Signature-Timestamp and the body; 401 for a bad signature', () => {
    expect(DiscordHeaders).toEqual({ SIGNATURE: 'x-signature-ed25519', TIMESTAMP: 'x-signature-timestamp' });
    expect(DISCORD_REFUSAL_STATUS).toBe(401);
  });

  it('Discord: interaction types 1 to 5 (PING to MODAL_SUBMIT); answers PONG 1, deferrals 5 and 6, autocomplete results 8', () => {
    expect(DiscordInteractionType).toEqual({ PING: 1, APPLICATION_COMMAND: 2, MESSAGE_COMPONENT: 3, APPLICATION_COMMAND_AUTOCOMPLETE: 4, MODAL_SUBMIT: 5 });
    expect(DiscordCallbackType).toEqual({
      PONG: 1,
      DEFERRED_CHANNEL_MESSAGE_WITH_SOURCE: 5,
      DEFERRED_UPDATE_MESSAGE: 6,
      APPLICATION_COMMAND_AUTOCOMPLETE_RESULT: 8,
    });
  });

  it('Square: base64 HMAC-SHA256 in X-Square-HmacSha256-Signature', () => {
    expect(SQUARE_SIGNATURE_HEADER).toBe('x-square-hmacsha256-signature');
  });
});

describe('the tables by kind, derived from the facts', () => {
  it('each adapter kind is named once, AdapterKind spelling each as a constant', () => {
    expect(new Set(ALL_PROVIDER_FACTS.map((facts) => facts.kind)).size).toBe(ALL_PROVIDER_FACTS.length);
    expect(AdapterKind.MESSAGE_BATCHES).toBe('message-batches');
    expect(AdapterKind.STANDARD_WEBHOOKS).toBe('standard-webhooks');
    expect(Object.values(AdapterKind).sort()).toEqual(ALL_PROVIDER_FACTS.map((facts) => facts.kind).sort());
  });

  it('Square and Twilio sign the URL; Meta checks the endpoint with a GET; SNS signs with certificates; a batch API is only polled; those two have no secret', () => {
    expect([...URL_SIGNING_ADAPTERS].sort()).toEqual(['square', 'twilio']);
    expect(GET_CHECKED_ADAPTERS).toEqual(['meta']);
    expect(CERTIFICATE_SIGNED_ADAPTERS).toEqual(['sns']);
    expect(POLLED_ONLY_ADAPTERS).toEqual(['message-batches']);
    expect([...SECRETLESS_ADAPTERS].sort()).toEqual(['message-batches', 'sns']);
  });

  it('Answerline, Echonova and a batch API can be polled: the task URL Answerline and Anthropic document, none for Echonova', () => {
    expect([...POLLED_ADAPTERS].sort()).toEqual(['answerline', 'echonova', 'message-batches']);
    expect(PollingDefaults.answerline).toEqual({
      taskUrlTemplate: 'https://api.answerline.dev/v1/async/task/{taskId}',
      horizonSeconds: 17_405,
      recheckSeconds: 600,
    });
    expect(PollingDefaults.echonova).toEqual({ horizonSeconds: 3600, recheckSeconds: 300 });
    expect(PollingDefaults['message-batches']).toEqual({
      taskUrlTemplate: 'https://api.anthropic.com/v1/messages/batches/{batchId}',
      horizonSeconds: 60,
      recheckSeconds: 300,
    });
    expect(PollingDefaults.ledgerOnly).toEqual({ horizonSeconds: 17_405, recheckSeconds: 900 });
  });

  it('secrets: whsec_ for Answerline and Standard Webhooks, JSON for Meta, none for SNS, text for the rest', () => {
    const formats = Object.fromEntries(ALL_PROVIDER_FACTS.map((facts) => [facts.kind, facts.secretFormat]));
    expect(formats).toEqual({
      ...Object.fromEntries(Object.values(AdapterKind).map((kind) => [kind, 'text'])),
      answerline: 'whsec',
      'standard-webhooks': 'whsec',
      meta: 'json',
      sns: 'none',
    });
  });
});
