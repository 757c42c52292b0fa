/**
 * What a template holds that the twin cannot run, said in one line that names where: the stack,
 * the resource (its logical id, type and construct path) or output, and the property. The command
 * prints such an error's message alone: a stack trace would be the twin's, not the app's, and tell
 * the app's author nothing about what to change.
 */

/** Where in a synthesized template; each part is filled in where it becomes known. */
export interface TemplatePlace {
  readonly stackName?: string;
  /** A resource's logical id. */
  readonly logicalId?: string;
  /** The resource's type. */
  readonly type?: string;
  /** The resource's construct path within its stack (`Inbox/Verifier`), when the template's metadata says it. */
  readonly constructPath?: string;
  /** An output's key, when the place is an output rather than a resource. */
  readonly output?: string;
  /** The property, as a path of keys (`Environment.Variables.TABLE`). */
  readonly property?: string;
}

export class TemplateError extends Error {
  override name = 'TemplateError';
  private where: TemplatePlace;

  constructor(
    readonly reason: string,
    place: TemplatePlace = {},
  ) {
    super(reason);
    this.where = place;
    this.message = this.describe();
  }

  get place(): TemplatePlace {
    return this.where;
  }

  /**
   * Adds what is known here of where it happened, as the error travels out. Until it names a
   * resource or an output, a property here is the outer part of the property's path and the rest
   * fills in what is not known yet. Once it names one, only what is missing of that same resource
   * is filled in (and the stack): an outer resource is one whose name waits on this one.
   */
  at(place: TemplatePlace): this {
    const where = this.where;
    if (where.logicalId === undefined && where.output === undefined) {
      const property = [place.property, where.property].filter((part) => part !== undefined).join('.');
      this.where = { ...definedOnly(place), ...definedOnly(where), ...(property ? { property } : {}) };
    } else {
      const same = (place.logicalId ?? where.logicalId) === where.logicalId && (place.output ?? where.output) === where.output;
      const { property: _outer, ...fill } = same ? place : { stackName: place.stackName };
      this.where = { ...definedOnly(fill), ...definedOnly(where) };
    }
    this.message = this.describe();
    return this;
  }

  private describe(): string {
    const { stackName, logicalId, type, constructPath, output, property } = this.where;
    const about = [constructPath, type].filter(Boolean).join(', ');
    const parts = [
      stackName !== undefined ? `stack ${stackName}` : undefined,
      logicalId !== undefined ? `resource ${logicalId}${about ? ` (${about})` : ''}` : undefined,
      output !== undefined ? `output ${output}` : undefined,
      property ? `property ${property}` : undefined,
    ].filter(Boolean);
    return parts.length ? `${parts.join(', ')}: ${this.reason}` : this.reason;
  }
}

/** Runs `work`; a TemplateError it throws is placed at `place` (see `TemplateError.at`). */
export function placed<T>(place: TemplatePlace, work: () => T): T {
  try {
    return work();
  } catch (error) {
    if (error instanceof TemplateError) error.at(place);
    throw error;
  }
}

function definedOnly(place: TemplatePlace): TemplatePlace {
  return Object.fromEntries(Object.entries(place).filter(([, value]) => value !== undefined));
}
