import type { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { Env } from '../../../lib/contract';
import { onFirstUse } from '../runtime/on-first-use';
import { busSinkFromEnv, EffectSink, SequentialSinks } from './sinks';

/**
 * The sinks the construct configured: the user's function, the bus, both, or none. The function's
 * sink is `functionSink`'s when given (the tests hand in one on their own client); the default
 * one's module, and with it the Lambda client, is loaded at the first effect. Apart from sinks.ts,
 * which the reconciler imports too: its bundle would carry that module's chunk unused.
 */
export function effectSinkFromEnv(
  env: Record<string, string | undefined>,
  eventBridge?: EventBridgeClient,
  functionSink?: (functionArn: string) => EffectSink,
): EffectSink | undefined {
  const sinks: EffectSink[] = [];
  const functionArn = env[Env.EFFECT_FUNCTION_ARN];
  const bus = busSinkFromEnv(env, eventBridge);
  if (functionArn) sinks.push(functionSink ? functionSink(functionArn) : deferredFunctionSink(functionArn));
  if (bus) sinks.push(bus);
  if (sinks.length === 0) return undefined;
  return sinks.length === 1 ? sinks[0] : new SequentialSinks(sinks);
}

/** The sink of the function on the default Lambda client: a module of its own, loaded at the first effect. */
function deferredFunctionSink(functionArn: string): EffectSink {
  const sink = onFirstUse(async () => (await import('./function-sink.js')).defaultFunctionSink(functionArn));
  return { dispatch: async (effects) => (await sink()).dispatch(effects) };
}
