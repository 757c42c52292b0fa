/**
 * Every server of the local twin listens on 127.0.0.1 only: its port answers on loopback and
 * refuses a connection to this machine's non-loopback address. The emulators run in their own
 * process (fauxqs is ESM-only, which jest's module sandbox does not load) and report the address
 * their servers are bound to.
 */
import { ChildProcessByStdio, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer, AddressInfo, connect } from 'node:net';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Readable, Writable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { EventBridgeStandIn } from '../../src/aws/eventbridge/stand-in';
import { FaultProxy } from '../../src/faults/proxy';
import { LambdaInvokeStandIn } from '../../src/aws/lambda/invoke-stand-in';
import { closeServer, listenOnLoopback } from '../../src/aws/loopback';
import { SecretsManagerStandIn } from '../../src/aws/secretsmanager/stand-in';

const EMULATORS_MODULE = pathToFileURL(join(__dirname, '..', '..', 'src', 'aws', 'emulators.mjs')).href;

/** An address of this machine that is not loopback (link-local IPv6 needs a scope, so not those). */
function nonLoopbackAddress(): string | undefined {
  const addresses = Object.values(networkInterfaces())
    .flat()
    .filter((entry) => entry !== undefined && !entry.internal && !entry.address.startsWith('fe80:'));
  return (addresses.find((entry) => entry!.family === 'IPv4') ?? addresses[0])?.address;
}

const NON_LOOPBACK = nonLoopbackAddress();

/** Whether a TCP connection to host:port is accepted. */
function accepts(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port, timeout: 2_000 });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(false));
  });
}

async function expectLoopbackOnly(port: number): Promise<void> {
  expect(await accepts('127.0.0.1', port)).toBe(true);
  if (NON_LOOPBACK) expect(await accepts(NON_LOOPBACK, port)).toBe(false);
}

describe('the emulators', () => {
  let child: ChildProcessByStdio<Writable, Readable, null>;
  let bound: { dynamodb: AddressInfo; sqs: AddressInfo };

  beforeAll(async () => {
    const script = [
      `import { startEmulators } from ${JSON.stringify(EMULATORS_MODULE)};`,
      'const emulators = await startEmulators();',
      'console.log(JSON.stringify({ dynamodb: emulators.dynamodb.address(), sqs: emulators.sqs.server.address() }));',
      // Serve until the test closes stdin.
      'process.stdin.resume();',
      'process.stdin.once("end", () => void emulators.stop());',
    ].join('\n');
    child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['pipe', 'pipe', 'inherit'] });
    const [readyLine] = (await once(createInterface(child.stdout), 'line')) as [string];
    bound = JSON.parse(readyLine) as typeof bound;
  });

  afterAll(async () => {
    const exited = once(child, 'exit');
    child.stdin.end();
    await exited;
  });

  it.each(['dynamodb', 'sqs'] as const)('%s is bound to 127.0.0.1 and refuses other addresses', async (name) => {
    expect(bound[name].address).toBe('127.0.0.1');
    await expectLoopbackOnly(bound[name].port);
  });
});

describe('the stand-ins', () => {
  it('listenOnLoopback binds 127.0.0.1', async () => {
    const server = createServer();
    try {
      const url = await listenOnLoopback(server);
      const address = server.address() as AddressInfo;
      expect(address.address).toBe('127.0.0.1');
      expect(url).toBe(`http://127.0.0.1:${address.port}`);
      await expectLoopbackOnly(address.port);
    } finally {
      await closeServer(server);
    }
  });

  const standIns: [string, () => { start(): Promise<string>; stop(): Promise<void> }][] = [
    ['Secrets Manager', () => new SecretsManagerStandIn()],
    ['EventBridge', () => new EventBridgeStandIn()],
    ['Lambda invoke', () => new LambdaInvokeStandIn()],
    ['fault proxy', () => new FaultProxy({ host: '127.0.0.1', port: 9 })],
  ];

  it.each(standIns)('the %s stand-in refuses other addresses', async (_name, make) => {
    const standIn = make();
    try {
      await expectLoopbackOnly(Number(new URL(await standIn.start()).port));
    } finally {
      await standIn.stop();
    }
  });
});
