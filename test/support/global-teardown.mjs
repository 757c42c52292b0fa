export default async function globalTeardown() {
  await globalThis.__EMULATORS__?.stop();
}
