/**
 * What the local console shows: one snapshot of the twin, taken on each refresh. Everything in it
 * is safe to show a person: no delivery body, signature or secret ever reaches it.
 */

/** The state of a CloudWatch alarm. */
export type AlarmStateValue = 'OK' | 'ALARM' | 'INSUFFICIENT_DATA';

/** One delivery the endpoint answered. */
export interface ConsoleDelivery {
  /** When it arrived, ISO 8601. */
  readonly at: string;
  /** The provider of the route it arrived on (`/hooks/<provider>`). */
  readonly provider: string;
  /** The HTTP status the endpoint answered. */
  readonly status: number;
  /** Why it was answered so (`accepted`, `bad_signature`, …); it may quote the request, so it is shown as text. */
  readonly reason: string;
  /** The request id the endpoint gave it, when it gave one. */
  readonly requestId?: string;
}

/** One provider of an inbox and the URL it posts to. */
export interface ConsoleProvider {
  /** The provider's name. */
  readonly name: string;
  /** The URL the provider posts to: the twin's `POST /hooks/<provider>`. */
  readonly url: string;
}

/** One inbox of the template and what it holds. */
export interface ConsoleInbox {
  /** The inbox's name. */
  readonly name: string;
  /** Its providers. */
  readonly providers: readonly ConsoleProvider[];
  /** Its recent deliveries, most recent first. */
  readonly deliveries: readonly ConsoleDelivery[];
  /** How many inbox rows are in each status (RECEIVED, PROCESSING, PROCESSED, FAILED, DEAD, …). */
  readonly rowsByStatus: Readonly<Record<string, number>>;
  /** Its dead-letter queue and how many messages are visible in it. */
  readonly deadLetter: { readonly queue: string; readonly depth: number };
  /** Flow control (docs/FLOW-CONTROL.md): paused since when (ISO 8601, null while running), the circuit breaker's state, since when and why. */
  readonly flow?: { readonly pausedSince: string | null; readonly breaker: string; readonly openedAt?: string; readonly reason?: string };
}

/** One alarm of the template, as the twin evaluates it. */
export interface ConsoleAlarm {
  /** The alarm's name (CloudFormation's physical name, unless the template names it). */
  readonly name: string;
  /** The name the README and the runbook use (`deadDeliveries`): an inbox's `alarms` attribute, else the construct id. */
  readonly label: string;
  /** The construct it belongs to (the inbox's path, `Answers`); empty at the stack's root. */
  readonly owner: string;
  /** Its current state. */
  readonly state: AlarmStateValue;
  /** Why it is in that state. */
  readonly reason: string;
  /** When its state last changed, ISO 8601. */
  readonly updatedAt: string;
  /** Where its runbook section is: an http(s) URL (a link), or a path of the installed package (shown as text). */
  readonly runbook?: string;
}

/** One line of a chart. */
export interface ConsoleSeries {
  /** The line's label in the legend. */
  readonly label: string;
  /** Its points as [epoch milliseconds, value], oldest first. */
  readonly points: readonly (readonly [number, number])[];
  /** Whether it is read against the right-hand axis. */
  readonly rightAxis?: boolean;
  /** Why it has no points, when it cannot be drawn locally (a math expression). */
  readonly notDrawn?: string;
}

/** One chart of a dashboard. */
export interface ConsoleWidget {
  /** The chart's title. */
  readonly title: string;
  /** Its lines. */
  readonly series: readonly ConsoleSeries[];
}

/** One CloudWatch dashboard of the template. */
export interface ConsoleDashboard {
  /** The dashboard's name. */
  readonly name: string;
  /** Its metric charts, in the dashboard's order. */
  readonly widgets: readonly ConsoleWidget[];
}

/** Everything the console shows at one moment. */
export interface ConsoleSnapshot {
  /** When the snapshot was taken, ISO 8601. */
  readonly generatedAt: string;
  /** The inboxes of the template (there may be several). */
  readonly inboxes: readonly ConsoleInbox[];
  /** The alarms of the template. */
  readonly alarms: readonly ConsoleAlarm[];
  /** The dashboards of the template, their charts filled from the twin's metrics. */
  readonly dashboards: readonly ConsoleDashboard[];
  /** The AWS calls the IAM gateway refused so far, by function (stack and path); absent from a source without a gateway. */
  readonly iam?: { readonly enforced: boolean; readonly deniedByFunction: Readonly<Record<string, number>> };
}

/** Where the console takes its snapshots from: the twin implements it. */
export interface ConsoleSource {
  snapshot(): Promise<ConsoleSnapshot>;
  /** Pauses or resumes the inbox of this name, as `webhook-inbox pause` and `resume` do; absent: the console offers neither. */
  changeFlow?(inbox: string, action: FlowAction): Promise<void>;
}

/** What the console's buttons do to an inbox's processing. */
export type FlowAction = 'pause' | 'resume';
