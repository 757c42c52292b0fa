const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const OPEN_OBJECT = 0x7b;
const CLOSE_ARRAY = 0x5d;
const CLOSE_OBJECT = 0x7d;

/**
 * Whether text nests JSON arrays and objects deeper than `limit`, counted on its bytes without
 * parsing it: each `[` or `{` outside a string opens a level, each `]` or `}` closes one. Any
 * bytes may be given (a form body, text that does not parse); UTF-8 is read byte by byte, since
 * no multi-byte character holds a quote, a backslash or a bracket. Stops at the first level past
 * the limit. Written as a loop because the text it judges would overflow a recursive reader's stack.
 */
export function nestsDeeperThan(text: Buffer | string, limit: number): boolean {
  const bytes = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
  // Each level past the limit needs a byte of its own.
  if (bytes.length <= limit) return false;
  let depth = 0;
  let inString = false;
  for (let at = 0; at < bytes.length; at++) {
    const byte = bytes[at];
    if (inString) {
      if (byte === BACKSLASH) at++;
      else if (byte === QUOTE) inString = false;
    } else if (byte === QUOTE) {
      inString = true;
    } else if (byte === OPEN_ARRAY || byte === OPEN_OBJECT) {
      if (++depth > limit) return true;
    } else if ((byte === CLOSE_ARRAY || byte === CLOSE_OBJECT) && depth > 0) {
      depth--;
    }
  }
  return false;
}
