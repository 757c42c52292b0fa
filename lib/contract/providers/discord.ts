import { ProviderFacts, SECRET_SIGNED_REQUESTS, SecretFormat } from './facts';

/**
 * Discord's documented interactions behaviour (docs/providers/discord.md): each interaction is
 * sent once, signed with the application's Ed25519 key, and must be answered within 3 seconds by
 * an interaction response in the HTTP answer itself; Discord never retries or redelivers one.
 */
export const DISCORD_REDELIVERY_SECONDS = 0;

/** The headers of a signed interaction: hex Ed25519 signature of `timestamp + body`, and the Unix seconds it signs. */
export const DiscordHeaders = {
  SIGNATURE: 'x-signature-ed25519',
  TIMESTAMP: 'x-signature-timestamp',
} as const;

/** The status Discord requires for a request whose signature does not verify (it probes with bad ones). */
export const DISCORD_REFUSAL_STATUS = 401;

/** An interaction's `type`. */
export const DiscordInteractionType = {
  PING: 1,
  APPLICATION_COMMAND: 2,
  MESSAGE_COMPONENT: 3,
  APPLICATION_COMMAND_AUTOCOMPLETE: 4,
  MODAL_SUBMIT: 5,
} as const;

/** The `type` of an interaction response (what the HTTP answer's JSON body carries). */
export const DiscordCallbackType = {
  PONG: 1,
  /** Acknowledged, the answer comes later (the user sees a loading state): commands and modal submits. */
  DEFERRED_CHANNEL_MESSAGE_WITH_SOURCE: 5,
  /** Acknowledged, the component's message may be edited later (no loading state): components only. */
  DEFERRED_UPDATE_MESSAGE: 6,
  APPLICATION_COMMAND_AUTOCOMPLETE_RESULT: 8,
} as const;

/** Discord: the facts every table by provider kind derives from. */
export const DiscordFacts = {
  kind: 'discord',
  title: 'Discord',
  secretFormat: SecretFormat.TEXT,
  redeliverySeconds: DISCORD_REDELIVERY_SECONDS,
  tolerance: undefined,
  requests: SECRET_SIGNED_REQUESTS,
  polling: undefined,
  eventType: { jsonPath: 'type' },
  rotationRefusal: "the stored value is the Discord application's public key, not a secret: there is nothing to rotate",
} as const satisfies ProviderFacts;
