// Removes the run's temporary folder (run-setup.mjs), and with it whatever a test or a process it
// started left there.
import { rmSync } from 'node:fs';
import jestProject from './jest-project.cjs';

const { RUN_TMPDIR } = jestProject;

export function finishRun() {
  const folder = process.env[RUN_TMPDIR];
  if (folder) rmSync(folder, { recursive: true, force: true });
}

export default async function runTeardown() {
  finishRun();
}
