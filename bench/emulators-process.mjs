// The emulators in a process of their own, as DynamoDB and SQS are outside a Lambda function:
// their work and their heap do not share the measured handler's thread. The parent reads the
// endpoints from the first IPC message; disconnecting stops the emulators.
import { startEmulators } from '#twin/emulators';

const emulators = await startEmulators();
process.send({ dynamodbEndpoint: emulators.dynamodbEndpoint, sqsEndpoint: emulators.sqsEndpoint });
process.once('disconnect', () => {
  void emulators.stop().finally(() => process.exit(0));
});
