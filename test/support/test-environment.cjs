/**
 * jest's node environment, with a temporary folder per test file: TMPDIR points into the run's own
 * folder (run-setup.mjs) while the file runs, for the file and every process it starts, and the
 * folder is removed when the file ends. Whatever a test leaves in os.tmpdir() (each `new App()`
 * without an outdir writes a cdk.out folder of a few MB there) goes with it, however the test ended.
 * On request (`CPU_LOG`), what each file cost in CPU.
 */
const { appendFileSync, mkdtempSync, readFileSync, rmSync } = require('node:fs');
const { join } = require('node:path');
const { TestEnvironment } = require('jest-environment-node');
const { RUN_TMPDIR } = require('./jest-project.cjs');

/**
 * When set, names a file each test file appends one JSON line to: its path, the CPU-seconds of its
 * worker (`self`) and of the processes it started and waited for (`children`), its wall seconds and
 * the load average at its end. On a machine others load, CPU-seconds compare where wall time does not.
 */
const CPU_LOG = 'WEBHOOK_INBOX_TEST_CPU_LOG';

/** This process's CPU-seconds and its waited-for children's, from Linux's /proc (utime, stime, cutime, cstime). */
function cpuSeconds() {
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
  const ticks = fields.slice(11, 15).map(Number);
  return { self: (ticks[0] + ticks[1]) / 100, children: (ticks[2] + ticks[3]) / 100 };
}

class FileTmpdirEnvironment extends TestEnvironment {
  constructor(config, context) {
    const runFolder = process.env[RUN_TMPDIR];
    // Set before the environment copies the worker's environment into the test file's `process.env`.
    const folder = runFolder ? mkdtempSync(join(runFolder, 'file-')) : undefined;
    if (folder) process.env.TMPDIR = folder;
    super(config, context);
    this.folder = folder;
    this.runFolder = runFolder;
    if (process.env[CPU_LOG]) this.started = { path: context.testPath, cpu: cpuSeconds(), at: Date.now() };
  }

  async teardown() {
    await super.teardown();
    if (this.started) {
      const { path, cpu, at } = this.started;
      const now = cpuSeconds();
      const round = (seconds) => Math.round(seconds * 100) / 100;
      const line = { path, self: round(now.self - cpu.self), children: round(now.children - cpu.children), wall: round((Date.now() - at) / 1000) };
      appendFileSync(process.env[CPU_LOG], `${JSON.stringify({ ...line, load: Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]) })}\n`);
    }
    if (!this.folder) return;
    process.env.TMPDIR = this.runFolder;
    rmSync(this.folder, { recursive: true, force: true });
  }
}

module.exports = FileTmpdirEnvironment;
