import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  authoritativeReadProblems,
  deliveryFilterProblems,
  Env,
  handlerVariables,
  hmacSchemeProblems,
  jsonPathProblems,
  notificationUrlProblems,
  PROVIDER_NAME_PATTERN,
  providerFactsOf,
  ProviderRuntimeConfig,
  sourceCidrProblems,
  topicArnProblems,
} from '../../../lib/contract';
import { ConfigurationError } from './errors';

type Environment = Record<string, string | undefined>;

/**
 * The variables a handler reads: its environment, with the variables of its configuration file
 * when it has one (the construct's functions: `Env.CONFIG_FILE`, in the code folder `LAMBDA_TASK_ROOT`).
 */
export function handlerEnvironment(env: Environment, readFile: (path: string) => string = (path) => readFileSync(path, 'utf8')): Environment {
  const name = env[Env.CONFIG_FILE];
  if (name === undefined || name === '') return env;
  const path = join(env.LAMBDA_TASK_ROOT ?? process.cwd(), name);
  let text: string;
  try {
    text = readFile(path);
  } catch (error) {
    throw new ConfigurationError(`environment variable ${Env.CONFIG_FILE} names ${path}, which cannot be read: ${(error as Error).message}`);
  }
  try {
    return handlerVariables(env, text);
  } catch (error) {
    throw new ConfigurationError((error as Error).message);
  }
}

/** Reads a required variable, naming it when it is absent. */
export function requiredEnv(env: Environment, name: string): string {
  const value = env[name];
  if (value === undefined || value === '') {
    throw new ConfigurationError(`environment variable ${name} is not set`);
  }
  return value;
}

/** Reads a positive integer, naming the variable when it is absent or not a number. */
export function integerEnv(env: Environment, name: string, fallback?: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') {
    if (fallback !== undefined) return fallback;
    throw new ConfigurationError(`environment variable ${name} is not set`);
  }
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new ConfigurationError(`environment variable ${name} must be a non-negative integer, got "${raw}"`);
  }
  return value;
}

/** What a function reads of its providers. */
export interface ProviderReading {
  /** Whether each provider's signing secret is named (the verifier's); the processor and the reconciler verify nothing. */
  readonly signingSecrets: boolean;
}

/** Parses and validates the providers the construct serialized into the environment. */
export function providersFromEnv(env: Environment, reading: ProviderReading = { signingSecrets: true }): ProviderRuntimeConfig[] {
  const raw = requiredEnv(env, Env.PROVIDERS);
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new ConfigurationError(`environment variable ${Env.PROVIDERS} is not valid JSON`);
  }
  if (!Array.isArray(parsed) || parsed.length === 0) {
    throw new ConfigurationError(`environment variable ${Env.PROVIDERS} must be a non-empty JSON array`);
  }
  return parsed.map((entry, index) => {
    const p = entry as Partial<ProviderRuntimeConfig>;
    const where = `${Env.PROVIDERS}[${index}]`;
    if (typeof p.name !== 'string' || !PROVIDER_NAME_PATTERN.test(p.name)) throw new ConfigurationError(`${where}.name is invalid`);
    if (typeof p.adapter !== 'string') throw new ConfigurationError(`${where}.adapter is missing`);
    const facts = providerFactsOf(p.adapter);
    if (facts?.requests.certificateSigned) {
      const problems = topicArnProblems(p.topicArns);
      if (problems.length > 0) throw new ConfigurationError(`${where}.topicArns ${problems.join('; ')}`);
    } else if (reading.signingSecrets && !facts?.requests.polledOnly && (typeof p.secretId !== 'string' || p.secretId === '')) {
      throw new ConfigurationError(`${where}.secretId is missing`);
    }
    for (const field of ['tolerancePastSeconds', 'toleranceFutureSeconds'] as const) {
      if (typeof p[field] !== 'number' || !(p[field]! >= 0)) throw new ConfigurationError(`${where}.${field} is invalid`);
    }
    if (p.previousSecretGraceSeconds !== undefined && !(typeof p.previousSecretGraceSeconds === 'number' && p.previousSecretGraceSeconds >= 0)) {
      throw new ConfigurationError(`${where}.previousSecretGraceSeconds is invalid`);
    }
    if (facts?.requests.configuredScheme) {
      const problems = p.hmac ? hmacSchemeProblems(p.hmac) : ['the scheme is missing'];
      if (problems.length > 0) throw new ConfigurationError(`${where}.hmac: ${problems.join('; ')}`);
    }
    if (p.authoritativeRead !== undefined) {
      const read = p.authoritativeRead;
      const problems = typeof read === 'object' && read !== null ? authoritativeReadProblems(read) : ['must be an object'];
      if (problems.length > 0) throw new ConfigurationError(`${where}.authoritativeRead: ${problems.join('; ')}`);
    }
    if (facts?.requests.signsUrl) {
      const problems = notificationUrlProblems(p.notificationUrl);
      if (problems.length > 0) throw new ConfigurationError(`${where}.notificationUrl ${problems.join('; ')}`);
    }
    if (p.allowedSourceCidrs !== undefined) {
      const problems = sourceCidrProblems(p.allowedSourceCidrs);
      if (problems.length > 0) throw new ConfigurationError(`${where}.allowedSourceCidrs: ${problems.join('; ')}`);
    }
    if (p.tenantJsonPath !== undefined) {
      const problems = jsonPathProblems(p.tenantJsonPath);
      if (problems.length > 0) throw new ConfigurationError(`${where}.tenantJsonPath ${problems.join('; ')}`);
    }
    if (p.filter !== undefined) {
      const problems = deliveryFilterProblems(p.adapter, p.filter);
      if (problems.length > 0) throw new ConfigurationError(`${where}.filter: ${problems.join('; ')}`);
    }
    return p as ProviderRuntimeConfig;
  });
}

/**
 * A JSON array of per-provider configurations the construct serialized into `name` (the
 * reconciler's polling and recovery), each checked by `problemsOf` and naming its provider; empty
 * when unset.
 */
export function providerConfigsFromEnv<T extends { readonly provider: string }>(env: Environment, name: string, problemsOf: (config: T) => string[]): T[] {
  const raw = env[name];
  if (raw === undefined || raw === '') return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new ConfigurationError(`environment variable ${name} is not valid JSON`);
  }
  if (!Array.isArray(parsed)) throw new ConfigurationError(`environment variable ${name} must be a JSON array`);
  return parsed.map((entry, index) => {
    const config = (entry ?? {}) as T;
    const problems = [...(typeof config.provider === 'string' && config.provider !== '' ? [] : ['provider is missing']), ...problemsOf(config)];
    if (problems.length > 0) throw new ConfigurationError(`${name}[${index}]: ${problems.join('; ')}`);
    return config;
  });
}
