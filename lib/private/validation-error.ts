import { IConstruct } from 'constructs';

/**
 * Props, or a use of a construct, refused at synth: the message starts with the construct's path,
 * so that an app with several inboxes shows which one. aws-cdk-lib's own `ValidationError` names
 * the path too, but it is internal to aws-cdk-lib (`@internal` in its typings and absent from its
 * jsii assembly; only `Errors.isValidationError` is public), so the inbox has this one.
 */
export class ValidationError extends Error {
  /** The path of the construct the error is about. */
  public readonly constructPath: string;

  constructor(message: string, scope: IConstruct) {
    const path = scope.node.path;
    super(path ? `${path}: ${message}` : message);
    this.name = 'ValidationError';
    this.constructPath = path;
  }
}
