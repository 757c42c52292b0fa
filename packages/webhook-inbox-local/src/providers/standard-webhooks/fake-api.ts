/**
 * A FAKE of a Standard Webhooks sender's resource API (OpenAI's `GET /v1/responses/{id}`,
 * docs/providers/standard-webhooks.md), for the local twin's fault-injection run: the processor's authoritative read fetches the
 * resource a `response.completed` delivery names. A resource that was never stored, or that the
 * provider no longer keeps (OpenAI drops `store=false` background responses after ~10 minutes),
 * answers 404. Bearer key, request log and injected failures come from FakeApiServer.
 */
import { randomUUID } from 'node:crypto';
import { FakeApiServer, idAfter, Route } from '../fake-api-server';

export const RESPONSES_PATH = '/v1/responses/';

export class FakeResponsesApi extends FakeApiServer {
  private readonly resources = new Map<string, unknown>();
  private readonly broken = new Set<string>();

  constructor(apiKey: string = `sk_${randomUUID().replace(/-/g, '')}`) {
    super(apiKey);
  }

  /** The authoritative read's `urlTemplate` for this fake. */
  get urlTemplate(): string {
    return `${this.url}${RESPONSES_PATH}{id}`;
  }

  /** Stores a resource, served as JSON with 200. */
  put(id: string, resource: unknown): void {
    this.resources.set(id, resource);
  }

  /** The resource is gone (expired, deleted): 404 from now on. */
  forget(id: string): void {
    this.resources.delete(id);
  }

  /** Every read of this resource fails with 500 (the provider cannot serve it): a row that names it never succeeds. */
  failAlways(id: string): void {
    this.broken.add(id);
  }

  has(id: string): boolean {
    return this.resources.has(id);
  }

  protected routes(): Route[] {
    return [
      {
        match: idAfter(RESPONSES_PATH),
        answer: (id) =>
          this.broken.has(id!)
            ? { status: 500, body: undefined }
            : this.resources.has(id!)
              ? { status: 200, body: this.resources.get(id!) }
              : { status: 404, body: undefined },
      },
    ];
  }

  protected errorBody(status: number): unknown {
    return { error: { type: status === 404 ? 'not_found' : 'server_error', message: `status ${status}` } };
  }
}
