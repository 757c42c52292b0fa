/** A template resource AWS would refuse to create: one line naming the stack, the resource, AWS's reason and what to do. */
export class ResourceRefusedError extends Error {
  override readonly name = 'ResourceRefusedError';

  constructor(stackName: string, logicalId: string, resourceType: string, reason: string, remedy: string) {
    super(`${stackName}: ${logicalId} (${resourceType}) failed to create: ${reason}. ${remedy}`);
  }
}
