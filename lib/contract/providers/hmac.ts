/** A generic HMAC sender documents nothing the inbox can rely on: three days, as the common providers. */
export const HMAC_REDELIVERY_SECONDS = 3 * 86_400;
