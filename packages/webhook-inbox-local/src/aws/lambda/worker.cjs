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
  const timeout = setTimeout(() => {
    // Lambda's own line for a timeout, in the function's log (stderr is a pipe: written before the kill).
    process.stderr.write(`${new Date().toISOString()} ${message.id} Task timed out after ${(message.timeoutMs / 1000).toFixed(2)} seconds\n`);
    process.kill(process.pid, 'SIGKILL');
  }, message.timeoutMs);
  const context = {
    awsRequestId: message.id,
    functionName: message.functionName,
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
  };
  try {
    const result = await handler(message.event, context);
    process.send({ type: 'result', id: message.id, result: result === undefined ? null : result });
  } catch (error) {
    const failure = describeError(error);
    process.stderr.write(invokeErrorLine(message.id, failure));
    process.send({ type: 'error', id: message.id, error: failure });
  } finally {
    clearTimeout(timeout);
    armed = undefined;
  }
});

/** What Lambda reports of a thrown value: its own type, message and stack lines (a non-Error is its text). */
function describeError(error) {
  if (error instanceof Error) {
    return { name: error.name || 'Error', message: String(error.message ?? ''), stack: String(error.stack ?? '').split('\n') };
  }
  return { name: 'Error', message: String(error), stack: [] };
}

/**
 * The line Lambda's Node.js runtime writes to the function's log group for an unhandled error:
 * time, request id, level, then `Invoke Error` and the error as JSON (errorType, errorMessage, stack).
 */
function invokeErrorLine(requestId, failure) {
  const document = JSON.stringify({ errorType: failure.name, errorMessage: failure.message, stack: failure.stack });
  return `${new Date().toISOString()}\t${requestId}\tERROR\tInvoke Error \t${document}\n`;
}
