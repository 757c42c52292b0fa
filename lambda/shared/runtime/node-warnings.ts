/**
 * The AWS SDK's own switch for its NodeVersionSupportWarning (on Node 20: "versions published
 * after the first week of January 2027 will require node >=22"), read by each client when it is
 * created, in this process and in every child process that inherits the environment.
 */
export const SDK_NODE_VERSION_WARNING_SWITCH = 'AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED';

/**
 * Hides the AWS SDK's NodeVersionSupportWarning. It says nothing about this package: the bundles
 * pin their SDK and Lambda runs Node 24. Every other warning is printed as Node prints it: only
 * the SDK is told, through its own switch, not to emit this one. Call it before the first client
 * is created.
 */
export function hideSdkNodeVersionWarning(): void {
  process.env[SDK_NODE_VERSION_WARNING_SWITCH] = 'true';
}
