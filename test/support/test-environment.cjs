/**
 * jest's node environment, with a temporary folder per test file: TMPDIR points into the run's own
 * folder (run-setup.mjs) while the file runs, for the file and every process it starts, and the
 * folder is removed when the file ends. Whatever a test leaves in os.tmpdir() (each `new App()`
 * without an outdir writes a cdk.out folder of a few MB there) goes with it, however the test ended.
 */
const { mkdtempSync, rmSync } = require('node:fs');
const { join } = require('node:path');
const { TestEnvironment } = require('jest-environment-node');
const { RUN_TMPDIR } = require('./jest-project.cjs');

class FileTmpdirEnvironment extends TestEnvironment {
  constructor(config, context) {
    const runFolder = process.env[RUN_TMPDIR];
    // Set before the environment copies the worker's environment into the test file's `process.env`.
    const folder = runFolder ? mkdtempSync(join(runFolder, 'file-')) : undefined;
    if (folder) process.env.TMPDIR = folder;
    super(config, context);
    this.folder = folder;
    this.runFolder = runFolder;
  }

  async teardown() {
    await super.teardown();
    if (!this.folder) return;
    process.env.TMPDIR = this.runFolder;
    rmSync(this.folder, { recursive: true, force: true });
  }
}

module.exports = FileTmpdirEnvironment;
