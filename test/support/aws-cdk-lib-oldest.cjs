// Preloaded with `node --require`: every `require('aws-cdk-lib')` and `require('aws-cdk-lib/...')`
// of the process (the app, the construct, cdk-nag) loads the oldest aws-cdk-lib the package
// supports, installed beside the newest as the devDependency alias `aws-cdk-lib-oldest`.
const Module = require('node:module');

const resolveFilename = Module._resolveFilename;
Module._resolveFilename = function resolveOldest(request, ...rest) {
  const oldest = request === 'aws-cdk-lib' || request.startsWith('aws-cdk-lib/') ? `aws-cdk-lib-oldest${request.slice('aws-cdk-lib'.length)}` : request;
  return resolveFilename.call(this, oldest, ...rest);
};
