/**
 * A judge of HTTP exchanges by a provider's published OpenAPI 3.0 description: whether a request
 * names a described operation with described parameters of the described types, and whether an
 * answer has a described status, the described headers and a body of the described schema. Its
 * rules are the description's; it knows nothing of the fakes or of the runtime it judges.
 *
 * The description's objects are open (a field it does not name is allowed); the judge closes
 * every object schema that names its properties and says nothing of others, so that a field a
 * fake invents (and a client might come to rely on) is a finding. Free-form objects (no
 * `properties`, or `additionalProperties` given) stay as described; so do the members of an
 * `allOf`, which only together name every property.
 */
import { readFileSync } from 'node:fs';
import Ajv, { ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';

type Json = Record<string, unknown>;

/** One request and its answer, as they went over the wire. */
export interface HttpExchange {
  readonly method: string;
  /** The path and query the request asked for. */
  readonly url: string;
  readonly status: number;
  /** The answer's headers, names lower-case. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

export interface OpenApiJudgeOptions {
  /**
   * The description's shared responses (`#/components/responses/…`) that stand for statuses an
   * operation does not list but the provider documents for every request (401, 403, 404, 429…).
   */
  readonly sharedResponses?: Readonly<Record<number, string>>;
  /** Headers every answer carries or may carry, by lower-case name: a header component (`#/components/headers/…`) and whether it is always there. */
  readonly headers?: Readonly<Record<string, { readonly ref: string; readonly always: boolean }>>;
}

/** A described operation a request names. */
interface Resolved {
  readonly template: string;
  readonly operation: Json;
  readonly parameters: readonly Json[];
  readonly pathValues: Readonly<Record<string, string>>;
}

const SCHEMA_ID = 'openapi';
const DROPPED = new Set([
  'example',
  'examples',
  'discriminator',
  'externalDocs',
  'xml',
  'deprecated',
  'readOnly',
  'writeOnly',
  'nullable',
  'description',
  'title',
]);

export class OpenApiJudge {
  private readonly bodies = new Ajv({ strict: false, allErrors: true, logger: false });
  /** Parameters arrive as text: this one coerces them to the described types. */
  private readonly params = new Ajv({ strict: false, allErrors: true, logger: false, coerceTypes: 'array' });
  private readonly compiled = new Map<string, ValidateFunction>();
  private readonly templates: { template: string; pattern: RegExp; names: string[] }[];

  constructor(
    private readonly document: Json,
    private readonly options: OpenApiJudgeOptions = {},
  ) {
    const schemas = Object.fromEntries(Object.entries(this.components('schemas')).map(([name, schema]) => [name, toJsonSchema(schema, true)]));
    for (const ajv of [this.bodies, this.params]) {
      addFormats(ajv);
      // The descriptions' own formats: Unix seconds.
      for (const format of ['unix-time', 'timestamp'])
        ajv.addFormat(format, { type: 'number', validate: (value: number) => Number.isInteger(value) && value >= 0 });
      ajv.addSchema({ $id: SCHEMA_ID, components: { schemas } });
    }
    this.templates = Object.keys(this.document.paths as Json).map((template) => {
      const names: string[] = [];
      const source = template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{([^}]+)\}/g, (_, name: string) => {
        names.push(name);
        return '([^/]+)';
      });
      return { template, pattern: new RegExp(`^${source}$`), names };
    });
  }

  static load(file: string, options?: OpenApiJudgeOptions): OpenApiJudge {
    return new OpenApiJudge(JSON.parse(readFileSync(file, 'utf8')) as Json, options);
  }

  /** The description's `info.version`. */
  get version(): string {
    return String((this.document.info as Json).version);
  }

  /** What is wrong with a request: its operation, its path and query parameters. Empty when described. */
  requestProblems(method: string, url: string): string[] {
    const parsed = new URL(url, 'http://judge.invalid');
    const resolved = this.resolve(method, parsed.pathname);
    if (typeof resolved === 'string') return [resolved];
    const problems: string[] = [];
    const values = new Map<string, unknown>(Object.entries(resolved.pathValues));
    problems.push(...this.queryValues(parsed.searchParams, resolved.parameters, values));
    for (const parameter of resolved.parameters) {
      const name = String(parameter.name);
      const key = `${String(parameter.in)}:${name}`;
      if (!values.has(key)) {
        if (parameter.required === true) problems.push(`${String(parameter.in)} parameter ${name} is required`);
        continue;
      }
      const holder = { value: values.get(key) };
      const validate = this.compile(this.params, `parameter ${resolved.template} ${key}`, {
        type: 'object',
        properties: { value: toJsonSchema(parameter.schema, false) },
      });
      if (!validate(holder)) problems.push(...describe(validate, `${String(parameter.in)} parameter ${name}`, true));
    }
    return problems;
  }

  /** What is wrong with an answer to a request: its status, its headers, its body. Empty when described. */
  responseProblems(exchange: HttpExchange): string[] {
    const resolved = this.resolve(exchange.method, new URL(exchange.url, 'http://judge.invalid').pathname);
    if (typeof resolved === 'string') return [resolved];
    const responses = resolved.operation.responses as Json;
    const status = exchange.status;
    const chosen = responses[String(status)] ?? responses[`${Math.floor(status / 100)}XX`] ?? this.options.sharedResponses?.[status] ?? responses.default;
    if (chosen === undefined) return [`status ${status} is not described for ${exchange.method} ${resolved.template}`];
    const response = this.deref(typeof chosen === 'string' ? { $ref: chosen } : (chosen as Json));
    return [...this.headerProblems(response, exchange), ...this.bodyProblems(response, exchange, `${status} ${resolved.template}`)];
  }

  private resolve(method: string, path: string): Resolved | string {
    for (const { template, pattern, names } of this.templates) {
      const match = pattern.exec(path);
      if (!match) continue;
      const item = (this.document.paths as Json)[template] as Json;
      const operation = item[method.toLowerCase()] as Json | undefined;
      if (!operation) return `${method} ${template} is not described`;
      const parameters = [...((item.parameters as Json[]) ?? []), ...((operation.parameters as Json[]) ?? [])].map((parameter) => this.deref(parameter));
      const pathValues = Object.fromEntries(names.map((name, index) => [`path:${name}`, decodeURIComponent(match[index + 1])]));
      return { template, operation, parameters, pathValues };
    }
    return `no described path is ${path}`;
  }

  /**
   * The query's parameters by `query:<name>`: `form` style (`name=value`, an array repeated), or
   * `deepObject` (`name[key]=value`; an array's items as `name[]=` or `name[0]=`, the bracket
   * form the providers that describe arrays as deep objects take). Problems: names not described,
   * brackets on a parameter that is not a deep object, a scalar given twice.
   */
  private queryValues(query: URLSearchParams, parameters: readonly Json[], values: Map<string, unknown>): string[] {
    const problems: string[] = [];
    for (const [key, value] of query) {
      const [, name, inner] = /^([^[]+)(?:\[([^\]]*)\])?$/.exec(key) ?? [undefined, key, undefined];
      const parameter = parameters.find((candidate) => candidate.in === 'query' && candidate.name === name);
      if (!parameter) {
        problems.push(`query parameter ${key} is not described`);
        continue;
      }
      const slot = `query:${name}`;
      const isArray = (parameter.schema as Json | undefined)?.type === 'array';
      if (inner !== undefined) {
        if (parameter.style !== 'deepObject') problems.push(`query parameter ${key}: ${name} is not a deepObject parameter`);
        else if (isArray && (inner === '' || /^\d+$/.test(inner))) values.set(slot, [...((values.get(slot) as unknown[]) ?? []), value]);
        else values.set(slot, { ...((values.get(slot) as Json) ?? {}), [inner]: value });
      } else if (isArray) {
        values.set(slot, [...((values.get(slot) as unknown[]) ?? []), value]);
      } else if (values.has(slot)) {
        problems.push(`query parameter ${name} is given twice`);
      } else {
        values.set(slot, value);
      }
    }
    return problems;
  }

  private headerProblems(response: Json, exchange: HttpExchange): string[] {
    const described = Object.entries((response.headers as Json | undefined) ?? {}).map(([name, header]) => ({
      name: name.toLowerCase(),
      header: this.deref(header as Json),
      always: (this.deref(header as Json).required as boolean | undefined) ?? false,
    }));
    const shared = Object.entries(this.options.headers ?? {}).map(([name, { ref, always }]) => ({ name, header: this.deref({ $ref: ref }), always }));
    const problems: string[] = [];
    for (const { name, header, always } of [...described, ...shared]) {
      const value = exchange.headers[name];
      if (value === undefined) {
        if (always) problems.push(`header ${name} is missing`);
        continue;
      }
      const schema = toJsonSchema(header.schema, false) as Json;
      const validate = this.compile(this.params, `header ${name}`, { type: 'object', properties: { value: schema } });
      // An integer header is digits, nothing else (coercion alone would take "1.0").
      if (schema.type === 'integer' && !/^-?\d+$/.test(value)) problems.push(`header ${name}: ${JSON.stringify(value)} is not an integer`);
      else if (!validate({ value })) problems.push(...describe(validate, `header ${name}`, true));
    }
    return problems;
  }

  private bodyProblems(response: Json, exchange: HttpExchange, where: string): string[] {
    const content = response.content as Json | undefined;
    if (!content) return exchange.body === '' ? [] : [`${where}: a body where none is described`];
    const mediaType = (exchange.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
    const media = content[mediaType] as Json | undefined;
    if (!media) return [`${where}: content-type ${JSON.stringify(mediaType)} is not described (${Object.keys(content).join(', ')})`];
    let body: unknown;
    try {
      body = JSON.parse(exchange.body);
    } catch {
      return [`${where}: the body is not JSON`];
    }
    const validate = this.compile(this.bodies, `body ${where} ${mediaType}`, toJsonSchema(media.schema, true));
    return validate(body) ? [] : describe(validate, `${where} body`);
  }

  private compile(ajv: Ajv, key: string, schema: unknown): ValidateFunction {
    let validate = this.compiled.get(key);
    if (!validate) {
      validate = ajv.compile(schema as Json);
      this.compiled.set(key, validate);
    }
    return validate;
  }

  private components(kind: string): Json {
    return ((this.document.components as Json)[kind] as Json | undefined) ?? {};
  }

  /** An object that may be a `$ref` to a component, followed. */
  private deref(value: Json): Json {
    let current = value;
    for (let depth = 0; typeof current.$ref === 'string' && depth < 10; depth++) {
      const [, kind, name] = /^#\/components\/([^/]+)\/(.+)$/.exec(current.$ref) ?? [];
      const target = kind ? (this.components(kind)[name] as Json | undefined) : undefined;
      if (!target) throw new Error(`the description has no ${current.$ref}`);
      current = target;
    }
    return current;
  }
}

/**
 * An OpenAPI 3.0 schema as JSON Schema: `nullable` as a type of its own, references into the
 * description's components, the description's annotations dropped; with `closed`, every object
 * naming its properties and silent on others allows no other (see the file's comment).
 */
export function toJsonSchema(schema: unknown, closed: boolean): unknown {
  if (Array.isArray(schema)) return schema.map((item) => toJsonSchema(item, closed));
  if (typeof schema !== 'object' || schema === null) return schema;
  const source = schema as Json;
  const out: Json = {};
  for (const [key, value] of Object.entries(source)) {
    if (DROPPED.has(key) || key.startsWith('x-')) continue;
    if (key === '$ref') out.$ref = String(value).replace(/^#/, `${SCHEMA_ID}#`);
    else if (key === 'properties')
      out.properties = Object.fromEntries(Object.entries(value as Json).map(([name, property]) => [name, toJsonSchema(property, closed)]));
    else if (key === 'allOf') out.allOf = (value as unknown[]).map((member) => toJsonSchema(member, false));
    else if (['items', 'additionalProperties', 'not', 'anyOf', 'oneOf'].includes(key)) out[key] = toJsonSchema(value, closed);
    else out[key] = value;
  }
  if (closed && source.properties !== undefined && source.additionalProperties === undefined) out.additionalProperties = false;
  return source.nullable === true ? { anyOf: [out, { type: 'null' }] } : out;
}

/** The validator's errors, each naming where; a parameter's or header's value is judged as `{ value }`, which its path leaves out. */
function describe(validate: ValidateFunction, where: string, holder = false): string[] {
  return (validate.errors ?? []).map((error) => {
    const path = holder ? error.instancePath.replace(/^\/value/, '') : error.instancePath;
    return `${where}${path}: ${error.message ?? error.keyword} ${JSON.stringify(error.params)}`;
  });
}
