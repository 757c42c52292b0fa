/**
 * Hides the AWS SDK's NodeVersionSupportWarning (on Node 20: "versions published after January
 * 2027 will require node >=22"). It says nothing about this package: the bundles pin their SDK and
 * Lambda runs Node 24. Every other warning is printed as Node would.
 */
export function hideSdkNodeVersionWarning(): void {
  process.removeAllListeners('warning');
  process.on('warning', (warning) => {
    if (!warning.message.startsWith('NodeVersionSupportWarning')) process.stderr.write(`${warning.name}: ${warning.message}\n`);
  });
}
