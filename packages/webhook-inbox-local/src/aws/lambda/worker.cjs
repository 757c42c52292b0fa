// One Lambda execution environment of the local twin: a separate process with its own
// environment variables that loads a shipped handler bundle once (the cold start) and then
// runs one invocation at a time, as Lambda does. Plain CommonJS so a sandbox starts in
// milliseconds. Faults the twin injects: "crash after the next successful <AWS operation>",
// which SIGKILLs this process right after the service answered (e.g. after the inbox write
// committed, before the HTTP answer goes out).
'use strict';
const diagnostics = require('node:diagnostics_channel');

const bundlePath = process.argv[2];
const handlerExport = process.argv[3] || 'handler';
let armed; // { target, remaining }

diagnostics.subscribe('http.client.response.finish', ({ request, response }) => {
  if (!armed || response.statusCode !== 200) return;
  if (String(request.getHeader('x-amz-target') ?? '') !== armed.target) return;
  armed.remaining -= 1;
  if (armed.remaining <= 0) process.kill(process.pid, 'SIGKILL');
});

const started = Date.now();
let handler;
// An ES module (.mjs) is imported, as Lambda's Node.js runtime imports it; anything else is required.
const load = bundlePath.endsWith('.mjs') ? import(require('node:url').pathToFileURL(bundlePath).href) : Promise.resolve().then(() => require(bundlePath));
load
  .then((module) => {
    handler = module[handlerExport];
    if (typeof handler !== 'function') throw new Error(`${bundlePath} exports no function "${handlerExport}"`);
    process.send({ type: 'ready', initMs: Date.now() - started });
  })
  .catch((error) => {
    process.send({ type: 'init_error', message: String(error && error.stack ? error.stack : error) });
    process.exit(1);
  });

process.on('message', async (message) => {
  if (message.type !== 'invoke') return;
  armed = message.crashAfter ? { target: message.crashAfter.target, remaining: message.crashAfter.count ?? 1 } : undefined;
  const deadline = Date.now() + message.timeoutMs;
  // The function's timeout, enforced here as Lambda's runtime does, on this environment's own clock:
  // it can never outlive a lease that started during the invocation, however late the host's timer fires.
  const timeout = setTimeout(() => process.kill(process.pid, 'SIGKILL'), message.timeoutMs);
  const context = {
    awsRequestId: message.id,
    functionName: message.functionName,
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
  };
  try {
    const result = await handler(message.event, context);
    process.send({ type: 'result', id: message.id, result: result === undefined ? null : result });
  } catch (error) {
    process.send({ type: 'error', id: message.id, error: { name: error && error.name, message: error && error.message } });
  } finally {
    clearTimeout(timeout);
    armed = undefined;
  }
});
