import { DISCORD_REFUSAL_STATUS, DiscordCallbackType, DiscordInteractionType, ProviderRuntimeConfig } from '../../../../lib/contract';
import { HandshakeAnswer } from '../../runtime/http';
import { decodeDiscordPublicKey, verifyDiscord } from './signature';
import { Admission, buildAdapter, eventIdFrom, parseJsonObject, ProviderAdapter } from '../adapter';

/**
 * Discord interactions: `X-Signature-Ed25519` over `X-Signature-Timestamp` + body, verified with
 * the application's public key; a refused signature is answered 401, as Discord requires (it
 * probes endpoints with bad signatures). Discord waits 3 s for an interaction response in the
 * HTTP answer: a PING is answered PONG, a stored interaction with a deferred response.
 */
export function discordAdapter(config: ProviderRuntimeConfig): ProviderAdapter {
  return buildAdapter(config, {
    decodeKey: decodeDiscordPublicKey,
    verify: verifyDiscord,
    admit: (_headers, body) => admitInteraction(body),
    refusalStatus: DISCORD_REFUSAL_STATUS,
    keptHeaders: [],
    describes: { resourcePath: 'id' },
  });
}

/**
 * What a verified interaction is: a PING is Discord checking the endpoint (answered PONG, never
 * stored); an autocomplete wants its choices in this very answer, which no stored row can give
 * (answered with none, never stored); any other interaction is stored under its `id` and answered
 * with a deferral the app follows up on with the interaction's token within 15 minutes.
 */
function admitInteraction(body: Buffer): Admission {
  const interaction = parseJsonObject(body);
  if (!interaction) return { kind: 'malformed', detail: 'body is not a JSON object' };
  const { type } = interaction;
  if (typeof type !== 'number' || !Number.isSafeInteger(type) || type < 1) {
    return { kind: 'malformed', detail: 'type is missing or not an interaction type' };
  }
  if (type === DiscordInteractionType.PING) return { kind: 'handshake', answer: interactionResponse({ type: DiscordCallbackType.PONG }) };
  if (type === DiscordInteractionType.APPLICATION_COMMAND_AUTOCOMPLETE) {
    return { kind: 'handshake', answer: interactionResponse({ type: DiscordCallbackType.APPLICATION_COMMAND_AUTOCOMPLETE_RESULT, data: { choices: [] } }) };
  }
  const admission = eventIdFrom(interaction.id, 'id');
  if (admission.kind !== 'event') return admission;
  // A component's deferral shows no loading state and lets the app edit the component's message.
  const deferral =
    type === DiscordInteractionType.MESSAGE_COMPONENT ? DiscordCallbackType.DEFERRED_UPDATE_MESSAGE : DiscordCallbackType.DEFERRED_CHANNEL_MESSAGE_WITH_SOURCE;
  return { ...admission, answer: interactionResponse({ type: deferral }) };
}

/** An interaction response, as the HTTP answer Discord reads it. */
function interactionResponse(response: Readonly<Record<string, unknown>>): HandshakeAnswer {
  return { status: 200, contentType: 'application/json', body: JSON.stringify(response) };
}
