/** The ops CLI's commands and their usage text (`--help`, and the answer to a usage error). */
import { Defaults, FLOW_STATE_CACHE_MS } from '../lib/contract';
import { DEFAULT_EVENTS_LIMIT, DETAIL_TYPES } from './commands/events';
import { DEFAULT_REJECTED_HOURS, DEFAULT_REJECTED_LIMIT } from './commands/quarantine';

export const COMMANDS = ['status', 'redrive', 'replay', 'inspect', 'reconcile', 'pause', 'resume', 'quarantine', 'events', 'search', 'export', 'hash'] as const;
export type Command = (typeof COMMANDS)[number];

const TARGET_HELP = `Target (one of):
  --stack <name>      a deployed stack: its CloudFormation outputs name the inbox's resources
  --inbox <path>      with --stack, when it holds several inboxes: the construct path (e.g. MyStack/Inbox),
                      a trailing part of it, or the inbox name
  --config <file>     a JSON file with the same configuration and optional endpoints (the local twin writes one)
  --region <region>   AWS region (default: AWS_REGION / the SDK's configuration)
  --json              print the report as JSON
  -h, --help          this help`;

export const USAGE = `webhook-inbox: operate a cdk-webhook-inbox (deployed, or the local twin)

Usage: webhook-inbox <command> (--stack <name> [--inbox <path>] | --config <file>) [options]

Commands:
  status       backlog, dead letters, stranded rows, quarantined copies, overdue submissions,
               paused or running, the circuit breaker, waiting rows
  redrive      move dead-lettered messages back to the work queue            [--limit N]
  replay       re-enqueue one event or every delivery in a time range
               --event <provider>#<eventId> | --from <ISO> --to <ISO>       [--force]
  inspect      one event's row (sanitized, never the body), its quarantined copies and job result
               <provider>#<eventId>
  reconcile    run the reconciler now and print its report      [--until-settled [--timeout S]]
  pause        stop processing: deliveries are still admitted, rows wait, no attempt is spent
  resume       start processing again (and close the circuit breaker); every waiting row is enqueued once
  quarantine   list the quarantined altered duplicates; --rejected: the records of requests
               refused at the authenticity check   [--provider P] [--since ISO] [--limit N]
  events       the effect events the inbox published, newest last (the local twin's events log)
               [--limit N] [--detail-type T]
  search       archived deliveries received in a window (no bodies), read from the archive
               --from <ISO> --to <ISO> [--provider P] [--type T]
  export       the same deliveries as JSON lines, each with its exact bytes (bodyBase64)
               --from <ISO> --to <ISO> [--provider P] [--type T]
  hash         the reference the delivery record logs for an id you hold, and the Logs Insights
               query that finds its lines (no target)
               <provider>#<eventId> | --resource <provider>#<resourceId> | --tenant <value>

${TARGET_HELP}

Exit codes: 0 ok; 1 the command failed (AWS error, no such stack, inbox output or event, ...);
2 usage error (unknown command or option, missing or malformed argument, which inbox is ambiguous).
'webhook-inbox <command> --help' describes one command.
`;

const ARCHIVE_HELP = `  Reads the inbox's archive (the construct's archive prop) for deliveries received in
  [--from, --to), at most 31 UTC days, without Athena: it lists and reads the archive's objects
  of each provider and day. A delivery archived twice (a retried batch) is printed once.
  --provider P   one provider's deliveries      --type T   one event type
`;

export const COMMAND_HELP: Readonly<Record<Command, string>> = {
  search: `Usage: webhook-inbox search <target> --from <ISO> --to <ISO> [--provider P] [--type T] [--json]

${ARCHIVE_HELP}`,
  export: `Usage: webhook-inbox export <target> --from <ISO> --to <ISO> [--provider P] [--type T]

${ARCHIVE_HELP}  Prints one JSON object a line on stdout: the archived record with its body (bodyBase64).
`,
  status: `Usage: webhook-inbox status <target> [--skip-scan] [--json]

  work queue     messages visible and in flight (approximate, from SQS)
  dead-letter    messages in the DLQ (remedy: webhook-inbox redrive)
  stranded rows  rows in the pending index for more than 5 minutes: one bounded COUNT Query per
                 shard (16), at most 1000 each ("≥" when a shard has more)
  quarantined    altered duplicates kept beside their originals. This is a Scan of the whole
                 inbox table with a filter (an ops command, never a per-delivery or scheduled
                 path); the items it read are printed. --skip-scan leaves it out.
  overdue        submissions in the awaiting index due for a check now, i.e. past their
                 provider's horizon without a result (n/a when the table has no such index)
  processing     running, or PAUSED since when and by what (webhook-inbox pause)
  breaker        the circuit breaker: CLOSED, OPEN or HALF_OPEN, since when and why
  waiting rows   rows neither processed nor dead in the pending index, however recent (bounded
                 like stranded rows): what a resume enqueues
`,
  redrive: `Usage: webhook-inbox redrive <target> [--limit N] [--json]

  Moves messages from the dead-letter queue back to the work queue, in batches of 10: receive,
  revive the DEAD row each names (RECEIVED again, with a fresh budget of attempts: the processor
  never claims a DEAD row), send the same body, delete. Prints how many moved and revived. A
  duplicate message is harmless.
  --limit N   move at most N messages (default: until the dead-letter queue is empty)
`,
  replay: `Usage: webhook-inbox replay <target> --event <provider>#<eventId> [--force] [--json]
       webhook-inbox replay <target> --from <ISO-8601> --to <ISO-8601> [--force] [--json]
       webhook-inbox replay <target> --batch <provider>#<batchId> --children <customId>[,<customId>...] [--force] [--json]

  Re-enqueues inbox rows (sort key "delivery"). A row not yet processed is enqueued again; a DEAD
  row goes back to RECEIVED (and into the pending index) and is enqueued. A PROCESSED row is
  reported and skipped; with --force its status goes back to RECEIVED (one conditional
  UpdateItem, which also puts it back in the pending index) and it is enqueued, so it is
  processed again with the same job and effect keys.
  --from/--to select rows by receivedAt, from inclusive, to exclusive. This is a Scan of the
  whole inbox table with a filter (an ops command, never a per-delivery or scheduled path); the
  items it read are printed.
  --batch/--children select the rows of those requests of a polled batch (one GetItem each).
`,
  inspect: `Usage: webhook-inbox inspect <target> <provider>#<eventId> [--json]

  Prints the row without its body: key, provider, eventId, status, attempts, outcome, digest,
  receivedAt and processedAt (ISO-8601), meta (provider headers kept at admission, already
  sanitized), lastError, the body's size and whether it is inline or in S3; its quarantined
  copies (digest, count, first and last seen); and its job's result (status, task id) when the
  delivery reports one.
`,
  reconcile: `Usage: webhook-inbox reconcile <target> [--until-settled [--timeout S]] [--json]

  Invokes the reconciler function (Lambda Invoke, RequestResponse), as its schedule does: the
  sweep of stranded rows, then the submission ledger. Prints its report. Exit code 1 when the
  function fails.
  --until-settled  runs it again every ${Defaults.UNTIL_SETTLED_INTERVAL_SECONDS} s, printing one progress line per run, until
                   reconciliation is done: no submission in the ledger due now or within the
                   longest recheck interval (a task still pending counts), and every polled
                   provider with a status endpoint (Answerline's GET /v1/async/status) reporting no
                   task queued or processing. Exit code 0 only then; 1 at the timeout, with what is left.
  --timeout S      with --until-settled: give up after S seconds (default: ${Defaults.UNTIL_SETTLED_TIMEOUT_SECONDS})
`,
  pause: `Usage: webhook-inbox pause <target> [--json]

  Pauses processing (docs/FLOW-CONTROL.md): one conditional write of the flow-control item in the
  inbox table. Deliveries are still verified, stored and acknowledged; within ${FLOW_STATE_CACHE_MS / 1000} s every
  processor answers its messages without claiming their rows (no attempt spent, nothing
  dead-lettered) and the reconciler's sweep enqueues none. Rows keep their TTL (retention): resume
  before it. Pausing a paused inbox keeps the first pause's time. Prints the state and the rows waiting.
`,
  resume: `Usage: webhook-inbox resume <target> [--json]

  Resumes processing and closes the circuit breaker, waits ${FLOW_STATE_CACHE_MS / 1000} s for every processor to see it,
  then invokes the reconciler (Lambda Invoke) with a resume request: one sweep that enqueues every
  waiting row once, processed at the configured batch size, concurrency and rate. What that run
  could not reach, the scheduled sweeps take up. Prints the state and how many rows were enqueued.
`,
  quarantine: `Usage: webhook-inbox quarantine <target> [--json]
       webhook-inbox quarantine <target> --rejected [--provider P] [--since ISO] [--limit N] [--json]

  Lists quarantined altered duplicates: key, digest, count, first and last seen. This is a Scan
  of the whole inbox table with a filter on the sort key prefix (an ops command, never a
  per-delivery or scheduled path); the items it read are printed. Bodies are never read.

  --rejected lists the records of requests refused at the authenticity check (bad signature,
  stale timestamp, missing signature headers, source not allowed), oldest first: time,
  provider, reason, status, the keyed hash of the source address, body size and digest, and
  the header names (never a value; the body is never kept). One Query per provider and day.
  --provider P   only this provider's records (default: every provider of the inbox)
  --since ISO    from this instant (default: ${DEFAULT_REJECTED_HOURS} hours ago)
  --limit N      at most N records (default: ${DEFAULT_REJECTED_LIMIT})
`,
  events: `Usage: webhook-inbox events --config <file> [--limit N] [--detail-type T] [--json]

  Lists the effect events the inbox published, newest last: time, detail type, and the detail's
  event key, job key and status when it has them. They come from the events log the local twin
  keeps (the config's eventsLog): its events of source cdk-webhook-inbox naming this inbox, on the
  inbox's bus when the config names one (eventBus). A malformed line of the log is skipped and
  counted. --json prints the array of events (the count of skipped lines goes to stderr).
  --limit N          the latest N (default: ${DEFAULT_EVENTS_LIMIT})
  --detail-type T    only ${DETAIL_TYPES.join(' or ')}
  A deployed stack has no such log: EventBridge keeps no history of a bus's events. To keep one,
  add an archive on the inbox's bus, or a rule (inbox.onJobResult) with an SQS queue as target.
`,
  hash: `Usage: webhook-inbox hash <provider>#<eventId> [--json]
       webhook-inbox hash --resource <provider>#<resourceId> [--json]
       webhook-inbox hash --tenant <value> [--json]

  Prints the reference the delivery record logs instead of the id (docs/DELIVERY-RECORD.md):
  eventRef, resourceRef or tenantRef, "sha256:" and 16 hex digits; and a CloudWatch Logs Insights
  query that lists every line carrying it. Run the query over the verifier's and the processor's
  log groups. Needs no --stack or --config and makes no AWS request.
`,
};
