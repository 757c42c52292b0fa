import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, linkSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Aws, Fn, Stack, Token, Tokenization } from 'aws-cdk-lib';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { IConstruct } from 'constructs';
import { Env, HANDLER_CONFIG_FILE, HandlerConfigFile, PackedPart, PackedValue } from '../contract';

/**
 * A function's settings split between the two places Lambda reads them from (docs/LIMITS.md#lambda-environment):
 * the handler configuration file holds everything known at synth; the environment only what
 * CloudFormation fills in at deploy, each secret of the stack in its short form.
 */
export interface PackedHandlerConfig {
  readonly environment: Record<string, string>;
  readonly file: HandlerConfigFile;
}

/** A secret of the function's own stack that CloudFormation names: its ARN is written as its logical id and what CloudFormation adds. */
interface StackSecret {
  readonly logicalId: string;
  readonly arn: string;
}

/**
 * Splits `variables` (values with tokens in them) into the file and the environment. A variable
 * that is one value CloudFormation fills in stays in the environment as it is; any other is
 * written into the file, each token in it read at cold start from the environment: a secret the
 * stack creates without a name as the 19 characters CloudFormation and Secrets Manager add to its
 * logical id, any other value whole.
 */
export function packHandlerConfig(scope: IConstruct, variables: Record<string, string>, secrets: readonly secretsmanager.ISecret[]): PackedHandlerConfig {
  const stackSecrets = stackSecretsByToken(scope, secrets);
  const environment: Record<string, string> = {};
  const fileVariables: Record<string, string | PackedValue> = {};
  const suffixes: string[] = [];
  const suffixIndex = new Map<string, number>();
  const refs = new Map<string, string>();
  const partOf = (token: string): PackedPart[] => {
    const secret = stackSecrets.get(token);
    if (secret) {
      if (!suffixIndex.has(token)) {
        suffixIndex.set(token, suffixes.length);
        suffixes.push(Fn.select(1, Fn.split(`:secret:${secret.logicalId}-`, secret.arn)));
      }
      return [{ env: Env.SECRET_ARN_PREFIX }, `${secret.logicalId}-`, { env: Env.SECRET_ARN_SUFFIXES, item: suffixIndex.get(token)! }];
    }
    if (!refs.has(token)) {
      const name = `${Env.REF_PREFIX}${refs.size}`;
      refs.set(token, name);
      environment[name] = token;
    }
    return [{ env: refs.get(token)! }];
  };
  for (const [name, value] of Object.entries(variables)) {
    if (!Token.isUnresolved(value)) {
      fileVariables[name] = value;
      continue;
    }
    const pieces = piecesOf(value);
    if (pieces.length === 1 && !stackSecrets.has(value)) {
      environment[name] = value;
      continue;
    }
    fileVariables[name] = { concat: pieces.flatMap((piece) => (Token.isUnresolved(piece) ? partOf(piece) : [piece])) };
  }
  if (suffixes.length > 0) {
    environment[Env.SECRET_ARN_PREFIX] = `arn:${Aws.PARTITION}:secretsmanager:${Aws.REGION}:${Aws.ACCOUNT_ID}:secret:`;
    environment[Env.SECRET_ARN_SUFFIXES] = Fn.join(',', suffixes);
  }
  environment[Env.CONFIG_FILE] = HANDLER_CONFIG_FILE;
  return { environment, file: { variables: fileVariables } };
}

/** The literal text and the tokens of a string, in order (each token as its own string). */
function piecesOf(value: string): string[] {
  const flat = (piece: unknown): string[] => (Array.isArray(piece) ? piece : [String(piece)]);
  const fragments = Tokenization.reverseString(value);
  return fragments.length === 0 ? [] : flat(fragments.join({ join: (left: unknown, right: unknown) => [...flat(left), ...flat(right)] }));
}

/**
 * The secrets among `secrets` that the function's own stack creates with a name CloudFormation
 * generates (`<logical id>-<12 characters>`), by the token of their ARN. A secret with a name of its own, of
 * another stack or imported keeps its whole ARN in the environment.
 */
function stackSecretsByToken(scope: IConstruct, secrets: readonly secretsmanager.ISecret[]): Map<string, StackSecret> {
  const stack = Stack.of(scope);
  const found = new Map<string, StackSecret>();
  for (const secret of secrets) {
    const resource = secret.node.defaultChild;
    if (!(secret instanceof secretsmanager.Secret) || !(resource instanceof secretsmanager.CfnSecret) || Stack.of(secret) !== stack) continue;
    if (stack.resolve(resource.name) !== undefined || piecesOf(secret.secretArn).length !== 1) continue;
    const logicalId = stack.resolve(resource.logicalId) as string;
    found.set(secret.secretArn, { logicalId, arn: secret.secretArn });
    // The file is written now; the template at synth: a secret renamed since would no longer be found at deploy.
    scope.node.addValidation({
      validate: () =>
        stack.resolve(resource.logicalId) === logicalId && stack.resolve(resource.name) === undefined
          ? []
          : [`the secret ${secret.node.path} was renamed (its logical id or its name) after the inbox was defined: rename it before defining the inbox`],
    });
  }
  return found;
}

/** Where staged handler folders are kept: one per bundle and configuration, shared by every synth that needs it. */
const STAGING_ROOT = join(tmpdir(), 'cdk-webhook-inbox-handlers');

/**
 * The code folder of a function: its handler bundle and its configuration file, staged once per
 * content (the folder's name is their digest, so a synth reuses what an earlier one staged).
 */
export function stageHandlerCode(bundleDir: string, handler: string, file: HandlerConfigFile): string {
  const text = JSON.stringify(file);
  const digest = createHash('sha256').update(folderDigest(bundleDir)).update(text).digest('hex').slice(0, 20);
  const staged = join(STAGING_ROOT, `${handler}-${digest}`);
  if (existsSync(staged)) return staged;
  mkdirSync(STAGING_ROOT, { recursive: true });
  // Staged aside, then renamed into place: a synth running at the same time sees the whole folder or none.
  const scratch = mkdtempSync(join(STAGING_ROOT, `.${handler}-`));
  linkOrCopy(bundleDir, scratch);
  writeFileSync(join(scratch, HANDLER_CONFIG_FILE), text);
  try {
    renameSync(scratch, staged);
  } catch (error) {
    rmSync(scratch, { recursive: true, force: true });
    if (!existsSync(staged)) throw error;
  }
  return staged;
}

/** The bundle's files hard-linked into the staged folder (no copy of them per configuration), or copied where the two are on different file systems. */
function linkOrCopy(from: string, to: string): void {
  for (const entry of readdirSync(from, { withFileTypes: true })) {
    const [source, target] = [join(from, entry.name), join(to, entry.name)];
    if (entry.isDirectory()) {
      mkdirSync(target);
      linkOrCopy(source, target);
    } else {
      try {
        linkSync(source, target);
      } catch {
        copyFileSync(source, target);
      }
    }
  }
}

function folderDigest(dir: string): string {
  const hash = createHash('sha256');
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true }).sort((a, b) =>
    join(a.parentPath, a.name).localeCompare(join(b.parentPath, b.name)),
  )) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    hash.update(path.slice(dir.length)).update(readFileSync(path));
  }
  return hash.digest('hex');
}
