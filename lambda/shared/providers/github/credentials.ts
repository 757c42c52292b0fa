import { createSign } from 'node:crypto';
import { ConfigurationError } from '../../runtime/errors';
import { SecretCache, SecretStage } from '../../signatures/secrets';

/**
 * GitHub's API credentials, read from Secrets Manager (AWSCURRENT): a token (personal access
 * token, fine-grained or classic; text, or JSON `{"apiKey": "…"}`), or a GitHub App's
 * `{"appId": "…", "privateKey": "-----BEGIN RSA PRIVATE KEY-----…"}`, with which the App's own
 * hook is read: GitHub takes a JSON Web Token the App signs (RS256), valid at most 10 minutes.
 */
export class GitHubCredentials {
  constructor(
    private readonly secrets: SecretCache,
    private readonly secretId: string,
  ) {}

  /** The `Authorization` header's value. */
  async authorization(nowMs: number): Promise<string> {
    return authorizationOf(await this.secrets.versions(this.secretId), nowMs);
  }

  /** The value again after GitHub refused it (the secret may have been rotated); undefined when not now. */
  async refreshed(nowMs: number): Promise<string | undefined> {
    const versions = await this.secrets.refreshAfterMiss(this.secretId);
    return versions ? authorizationOf(versions, nowMs) : undefined;
  }
}

function authorizationOf(versions: readonly { stage: string; value: string }[], nowMs: number): string {
  const value = versions.find((version) => version.stage === SecretStage.CURRENT)?.value.trim();
  if (!value) throw new ConfigurationError('the GitHub credentials secret has no AWSCURRENT value');
  const parsed = value.startsWith('{') ? parseObject(value) : undefined;
  if (parsed && typeof parsed.appId !== 'undefined' && typeof parsed.privateKey === 'string')
    return `Bearer ${appJwt(String(parsed.appId), parsed.privateKey, nowMs)}`;
  if (parsed && typeof parsed.apiKey === 'string' && parsed.apiKey !== '') return `Bearer ${parsed.apiKey}`;
  return `Bearer ${value}`;
}

function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

const base64url = (value: string | Buffer) => Buffer.from(value).toString('base64url');

/**
 * A GitHub App's JWT: issued 60 seconds in the past (GitHub's advice for clock drift), expiring 9
 * minutes later (GitHub refuses more than 10), the App's id as its issuer.
 */
export function appJwt(appId: string, privateKeyPem: string, nowMs: number): string {
  const issuedAt = Math.floor(nowMs / 1000) - 60;
  const header = base64url(JSON.stringify({ alg: 'RS256', typ: 'JWT' }));
  const claims = base64url(JSON.stringify({ iat: issuedAt, exp: issuedAt + 600, iss: appId }));
  const signature = createSign('RSA-SHA256').update(`${header}.${claims}`).sign(privateKeyPem);
  return `${header}.${claims}.${base64url(signature)}`;
}
