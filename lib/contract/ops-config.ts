/**
 * Everything the ops CLI needs to act on one inbox. The construct publishes it as a stack output
 * (`OPS_CONFIG_OUTPUT_DESCRIPTION`, JSON value); the local twin writes the same document.
 */
export interface OpsConfig {
  readonly inboxName: string;
  readonly inboxTable: string;
  readonly resultsTable: string;
  readonly workQueueUrl: string;
  readonly deadLetterQueueUrl?: string;
  readonly reconcilerFunctionName: string;
  readonly bodyBucket?: string;
  /** The archive's bucket (`search`, `export`), when the inbox has an archive. */
  readonly archiveBucket?: string;
  readonly providers: readonly string[];
  /**
   * Adapter kind (`AdapterKind`) of each provider, by provider name; lets `inspect` read a
   * delivery's job the way the processor does. Absent: a provider named after its preset is assumed to be one.
   */
  readonly adapters?: Readonly<Record<string, string>>;
  /**
   * How long a job's result item is kept after its last decision, seconds: `inspect` reads an
   * expired one as absent. Absent (an older stack): the default.
   */
  readonly resultRetentionSeconds?: number;
  /**
   * The pending index's shard count (`pendingIndexShards`): a row `replay` or `redrive` revives is
   * written under it. Absent (an older stack, or the default): `PendingIndex.SHARD_COUNT`.
   */
  readonly pendingShards?: number;
}

/** Where an inbox's services answer, when not at AWS's own endpoints (the local twin's emulators). */
export interface OpsEndpoints {
  readonly dynamodb?: string;
  readonly sqs?: string;
  readonly s3?: string;
  readonly lambda?: string;
  readonly region?: string;
}

/** The document the ops CLI's `--config <file.json>` reads (the local twin writes it): an OpsConfig, plus where its services answer. */
export interface LocalOpsConfig extends OpsConfig {
  readonly endpoints?: OpsEndpoints;
  /** The twin's log of every event put on a bus (one JSON line each): EventBridge itself keeps no history to list. */
  readonly eventsLog?: string;
  /** The bus the inbox's processor puts its effect events on. */
  readonly eventBus?: string;
}

/** The description of the stack output that carries an inbox's OpsConfig (one per inbox). */
export const OPS_CONFIG_OUTPUT_DESCRIPTION = 'cdk-webhook-inbox ops configuration';

/**
 * The event the ops CLI invokes the reconciler with (`source`, `detail-type`). `UNTIL_SETTLED`
 * asks for a settlement run: submissions due within the longest recheck interval are checked now
 * too, and the report says what is left (`settlement`: the ledger's unsettled count and each
 * polled provider's own status).
 */
export const ReconcileRequest = {
  SOURCE: 'webhook-inbox.cli',
  MANUAL: 'Manual reconcile',
  UNTIL_SETTLED: 'Reconcile until settled',
  /** `resume`: one sweep whose cutoff is now, so every row that waited is enqueued at once (docs/FLOW-CONTROL.md). */
  RESUME: 'Resume',
} as const;
