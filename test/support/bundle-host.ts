/**
 * Runs the shipped bundles (`assets/<handler>/index.mjs`) as Lambda does: each in its own process
 * (an execution environment of the local twin: plain Node.js, not jest's module registry),
 * configured only through its environment, its stdout collected as CloudWatch Logs would be.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { HANDLER_FILE } from '../../lib/contract';
import { LambdaHost } from '#twin/testing';

const ASSETS = join(__dirname, '..', '..', 'assets');

export class BundleHost {
  /** Every line the bundles wrote (their logs and EMF documents). */
  readonly lines: string[] = [];
  private readonly logs = new PassThrough();
  private readonly hosts: LambdaHost[] = [];

  constructor() {
    // Each host pipes its process's output here: a test file may start more than Node's default of 10.
    this.logs.setMaxListeners(0);
    this.logs.on('data', (chunk: Buffer) => this.lines.push(...chunk.toString('utf8').split('\n').filter(Boolean)));
  }

  /**
   * A bundle's handler. Its environment starts at its first invocation (a cold start), from this
   * process's environment plus `environment`.
   */
  handler<T>(name: string, environment: Record<string, string> = {}): T {
    const bundlePath = join(ASSETS, name, HANDLER_FILE);
    if (!existsSync(bundlePath)) throw new Error(`assets/${name}/${HANDLER_FILE} is missing: run \`npm run bundle\` first`);
    const host = new LambdaHost({ functionName: name, bundlePath, environment: { NODE_NO_WARNINGS: '1', ...environment }, logs: this.logs });
    this.hosts.push(host);
    return ((event?: unknown) => host.invoke(event)) as T;
  }

  /** The JSON lines the bundles wrote, parsed. */
  records(): Array<Record<string, unknown>> {
    return this.lines.map((line) => JSON.parse(line) as Record<string, unknown>);
  }

  async stop(): Promise<void> {
    await Promise.all(this.hosts.map((host) => host.stop()));
  }
}
