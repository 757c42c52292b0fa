import { finishRun } from './run-teardown.mjs';

export default async function globalTeardown() {
  await globalThis.__EMULATORS__?.stop();
  globalThis.__EMULATORS__ = undefined;
  finishRun();
}
