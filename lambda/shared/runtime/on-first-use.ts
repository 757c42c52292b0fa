/**
 * `load`, run once at the first call and shared by every later one: what a handler needs only
 * sometimes (the S3 client of large bodies, the client of the user's processing function) is
 * imported when first used, from a chunk of its own in the shipped bundle (scripts/bundle-options.ts).
 */
export function onFirstUse<T>(load: () => Promise<T>): () => Promise<T> {
  let loaded: Promise<T> | undefined;
  return () => (loaded ??= load());
}
