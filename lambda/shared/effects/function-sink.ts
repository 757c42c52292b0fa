import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { Effect, invocationOf } from './assembler';
import { EffectDispatchError, functionErrorType } from '../runtime/errors';
import { DispatchOutcome, EffectSink, failed, OK } from './sinks';

/**
 * Effects as synchronous invocations (RequestResponse) of the user's own processing function,
 * in any language, one per effect, concurrently. The function receives an EffectInvocation (the
 * EventBridge event shape, `detail.effectKey` included). A function error or a failed call fails
 * the row: it is released with the error and retried, and after maxReceiveCount it is DEAD with
 * its message in the DLQ, never lost. Only the error type is reported: the function's message
 * could carry content.
 */
export class LambdaFunctionSink implements EffectSink {
  constructor(
    private readonly client: LambdaClient,
    private readonly functionName: string,
  ) {}

  dispatch(effects: readonly Effect[]): Promise<DispatchOutcome[]> {
    return Promise.all(
      effects.map(async (effect) => {
        try {
          await this.invoke(effect);
          return OK;
        } catch (error) {
          return failed(error);
        }
      }),
    );
  }

  private async invoke(effect: Effect): Promise<void> {
    const out = await this.client.send(
      new InvokeCommand({
        FunctionName: this.functionName,
        InvocationType: 'RequestResponse',
        Payload: Buffer.from(JSON.stringify(invocationOf(effect)), 'utf8'),
      }),
    );
    if (out.FunctionError) {
      throw new EffectDispatchError(`the processing function failed (${out.FunctionError}: ${functionErrorType(out.Payload)})`);
    }
    if (out.StatusCode !== undefined && (out.StatusCode < 200 || out.StatusCode > 299)) {
      throw new EffectDispatchError(`the processing function answered status ${out.StatusCode}`);
    }
  }
}

/** The sink on the default Lambda client (its own module: effectSinkFromEnv loads it at the first effect). */
export function defaultFunctionSink(functionArn: string): LambdaFunctionSink {
  return new LambdaFunctionSink(new LambdaClient({}), functionArn);
}
