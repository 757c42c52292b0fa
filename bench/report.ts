/** The bench's results as Markdown tables, ready to paste into docs/PROOF.md. */
import { BenchResults, sizeName } from './bench';
import { MONTHLY_DELIVERIES } from './cost';
import { BODY_ENCODING } from './receivers';
import { dollars, fixed, times } from './stats';

const mark = (met: boolean) => (met ? '✅ met' : '❌ missed');

function table(header: string[], rows: string[][]): string {
  const line = (cells: string[]) => `| ${cells.map((cell) => cell.replace(/\|/g, '\\|')).join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

export function renderMarkdown(results: BenchResults): string {
  const { meta, latency, signature, coldStart, requests, cost, scaling, targets } = results;
  const out: string[] = [];
  out.push(
    `Measured by \`${meta.command}\` on ${meta.startedAt.slice(0, 10)}: Node ${meta.node}, ${meta.cpus} × ${meta.cpuModel.trim()}, ` +
      `load average ${meta.loadAverage.start[0]} at the start and ${meta.loadAverage.end[0]} at the end (a shared machine: compare the ratios, not the absolute times); ` +
      `${meta.seconds.toFixed(0)} s in all. Everything runs on 127.0.0.1 against dynalite (DynamoDB), fauxqs (SQS) and the Secrets Manager and EventBridge stand-ins, through the real AWS SDK v3 clients.`,
  );

  out.push('\n**Targets**\n');
  out.push(
    table(
      ['Figure', 'Target', 'Measured', 'Result'],
      targets.map((t) => [t.figure, t.target, t.value, `${mark(t.met)}${t.why ? ` — ${t.why}` : ''}`]),
    ),
  );

  out.push(renderBill(results));

  out.push('\n**Verifier latency vs its floor** (' + latency.conditions + ')\n');
  out.push(
    table(
      ['Series', 'p50 ms', 'p99 ms', 'mean ms', 'vs floor (p50 / p99)'],
      [
        [
          'Floor: the conditional PutItem + SendMessage the verifier cannot avoid (same clients, same item)',
          fixed(latency.floor.p50),
          fixed(latency.floor.p99),
          fixed(latency.floor.mean),
          '1.00× / 1.00×',
        ],
        [
          'Our verifier (createVerifier, warm secret cache)',
          fixed(latency.verifier.p50),
          fixed(latency.verifier.p99),
          fixed(latency.verifier.mean),
          `${times(latency.ratioP50)} / ${times(latency.ratioP99)}`,
        ],
        [
          'Powertools receiver edge (4 requests), for reference',
          fixed(latency.powertoolsEdge.p50),
          fixed(latency.powertoolsEdge.p99),
          fixed(latency.powertoolsEdge.mean),
          `${times(latency.powertoolsEdge.p50 / latency.floor.p50)} / ${times(latency.powertoolsEdge.p99 / latency.floor.p99)}`,
        ],
        [
          'Lean receiver edge (2 requests), for reference',
          fixed(latency.leanEdge.p50),
          fixed(latency.leanEdge.p99),
          fixed(latency.leanEdge.mean),
          `${times(latency.leanEdge.p50 / latency.floor.p50)} / ${times(latency.leanEdge.p99 / latency.floor.p99)}`,
        ],
      ],
    ),
  );

  out.push('\n**Signature verification vs the reference libraries** (' + signature.conditions + ')\n');
  out.push(
    table(
      ['Body', 'ours µs', 'standardwebhooks µs (no JSON parse)', 'ratio', 'ours + JSON.parse µs', 'svix µs (parses)', 'ratio'],
      signature.rows.map((row) => [
        sizeName(row.bytes),
        fixed(row.oursUs, 1),
        fixed(row.standardWebhooksUs, 1),
        times(row.vsStandardWebhooks, 1),
        fixed(row.oursWithParseUs, 1),
        fixed(row.svixUs, 1),
        times(row.vsSvix, 1),
      ]),
    ),
  );

  out.push('\n**Cold start** (' + coldStart.conditions + '; with maps: the same bundle with its source map, under `--enable-source-maps`, not shipped)\n');
  out.push(
    table(
      [
        'Handler',
        'KB loaded at start (files) + on first use',
        'load ms',
        'naive load ms (same SDK clients from node_modules)',
        'ratio',
        'naive ms, only the clients loaded at start',
        'largest parts of what loads at start',
        'map KB',
        'load ms with maps',
        'first stack ms, shipped / with maps',
      ],
      coldStart.rows.map((row) => [
        row.handler,
        `${fixed(row.bundleKb, 0)} (${row.filesAtStart}) + ${fixed(row.laterKb, 0)}`,
        fixed(row.bundleLoadMs, 0),
        `${fixed(row.naiveLoadMs, 0)} (${row.clients.join(', ')})`,
        times(row.ratio),
        `${fixed(row.naiveAtStartLoadMs, 0)} (${times(row.bundleLoadMs / row.naiveAtStartLoadMs)})`,
        row.composition
          .slice(0, 4)
          .map((part) => `${part.name} ${fixed(part.kb, 0)} KB`)
          .join(', '),
        fixed(row.sourceMapKb, 0),
        `${fixed(row.sourceMapsLoadMs, 0)} (${times(row.sourceMapsLoadMs / row.bundleLoadMs)})`,
        `${fixed(row.firstStackMs, 1)} / ${fixed(row.sourceMapsFirstStackMs, 1)}`,
      ]),
    ),
  );

  out.push('\n**AWS requests per accepted delivery** (' + requests.conditions + ')\n');
  const stageRow = (label: string, key: keyof typeof requests.ours.stages) => [
    label,
    fixed(requests.ours.stages[key], 3),
    fixed(requests.powertools.stages[key], 3),
    fixed(requests.lean.stages[key], 3),
  ];
  out.push(
    table(
      ['Stage', 'ours', 'Powertools receiver', 'lean receiver'],
      [
        stageRow('edge (verifier)', 'edge'),
        stageRow('SQS event source (receive, delete; per message)', 'eventSource'),
        stageRow('processor', 'processor'),
        [
          `reconciler (${requests.ours.stages.reconcilerPerRun} requests per run, amortized at ${MONTHLY_DELIVERIES.toLocaleString('en-US')} deliveries a month)`,
          fixed(requests.ours.stages.reconciler, 3),
          'none',
          'none',
        ],
        [`sweep: each delivery's pending-index entry and row read once, after sweepAfter`, fixed(requests.ours.stages.sweep, 3), 'none', 'none'],
        stageRow('signing-secret reads (amortized)', 'secrets'),
        stageRow('**whole pipeline**', 'total'),
      ],
    ),
  );
  out.push('\n');
  const operations = (figures: typeof requests.ours) =>
    figures.operations
      .filter((entry) => entry.stage !== 'reconciler' && entry.stage !== 'secrets')
      .map((entry) => `${entry.stage}: ${entry.operation} (${entry.purpose}) ${fixed(entry.perDelivery, 3)}`)
      .join('; ');
  out.push(
    `Ours, by request: ${operations(requests.ours)}.  \nPowertools receiver, by request: ${operations(requests.powertools)}.  \nLean receiver, by request: ${operations(requests.lean)}.`,
  );

  out.push('\n**Cost per million deliveries** (' + cost.conditions + ')\n');
  const perDelivery = (entry: { perDelivery: number; note?: string } | undefined) =>
    entry ? `${fixed(entry.perDelivery, entry.perDelivery < 0.01 ? 6 : 3)}${entry.note ? ` (${entry.note})` : ''}` : '—';
  const powertoolsItem = new Map(cost.powertools.lines.map((entry) => [entry.item, entry]));
  const leanItem = new Map(cost.lean.lines.map((entry) => [entry.item, entry]));
  out.push(
    table(
      ['Item', 'price', 'ours: per delivery', 'ours $/M', 'Powertools: per delivery', 'Powertools $/M', 'lean: per delivery', 'lean $/M'],
      [
        ...cost.ours.lines.map((entry) => {
          const powertools = powertoolsItem.get(entry.item);
          const lean = leanItem.get(entry.item);
          return [
            entry.item,
            entry.priceText,
            perDelivery(entry),
            dollars(entry.usdPerMillion),
            perDelivery(powertools),
            powertools ? dollars(powertools.usdPerMillion) : '—',
            perDelivery(lean),
            lean ? dollars(lean.usdPerMillion) : '—',
          ];
        }),
        [
          '**total**',
          '',
          '',
          `**${dollars(cost.ours.usdPerMillion)}**`,
          '',
          `**${dollars(cost.powertools.usdPerMillion)}** (ours ${times(cost.ratio)})`,
          '',
          `**${dollars(cost.lean.usdPerMillion)}** (ours ${times(cost.leanRatio)})`,
        ],
      ],
    ),
  );
  out.push(`\nBodies and results are stored alike by all three: ${BODY_ENCODING}.`);

  const line = (breakdown: typeof cost.ours, item: string) => breakdown.lines.find((entry) => entry.item === item)?.perDelivery ?? 0;
  out.push(
    `\n**Cost per million deliveries by body size** (${results.costBySize[0].bytes} B from the largest load above; each other size from its own run of ${results.costBySize.at(-1)!.deliveries} deliveries, one at a time at the edge, and its own unit trace)\n`,
  );
  out.push(
    table(
      [
        'Body',
        'ours $/M',
        'Powertools $/M',
        'ratio',
        'lean $/M',
        'ratio',
        'DynamoDB write units per delivery, ours vs Powertools vs lean',
        'requests per delivery, ours vs Powertools vs lean',
      ],
      results.costBySize.map((size) => [
        sizeName(size.bytes),
        dollars(size.ours.usdPerMillion),
        dollars(size.powertools.usdPerMillion),
        times(size.ratio),
        dollars(size.lean.usdPerMillion),
        times(size.leanRatio),
        `${fixed(line(size.ours, 'DynamoDB writes'), 2)} vs ${fixed(line(size.powertools, 'DynamoDB writes'), 2)} vs ${fixed(line(size.lean, 'DynamoDB writes'), 2)}`,
        `${fixed(size.requests.ours, 3)} vs ${fixed(size.requests.powertools, 3)} vs ${fixed(size.requests.lean, 3)}`,
      ]),
    ),
  );

  out.push(`\n**What the archive adds per million deliveries** (${results.archive.conditions})\n`);
  out.push(
    table(
      ['Item', 'per delivery', 'price', '$/M', 'note'],
      [
        ...results.archive.lines.map((entry) => [entry.item, fixed(entry.perDelivery, 6), entry.priceText, dollars(entry.usdPerMillion), entry.note ?? '']),
        ['Total', '', '', dollars(results.archive.usdPerMillion), `${fixed(results.archive.bytesPerDelivery, 0)} B stored per delivery`],
      ],
    ),
  );

  out.push(
    `\n**DynamoDB write units per request** (the unit trace: ${results.units.deliveries} deliveries each per body size, every written item read before and after; table units ${results.units.dynaliteAgrees ? 'agree with' : 'DIFFER from'} dynalite's ConsumedCapacity)\n`,
  );
  const unitRows = (body: number, receiver: string, entries: typeof results.units.ours) =>
    entries
      .filter((entry) => entry.tableWru + entry.indexWru > 0)
      .map((entry) => [
        sizeName(body),
        receiver,
        `${entry.stage}: ${entry.operation} (${entry.purpose})${entry.items !== entry.calls ? `, per item (${fixed(entry.items / entry.calls, 1)} a call)` : ''}`,
        fixed(entry.itemBytes / entry.items, 0),
        fixed(entry.tableWru / entry.items, 2),
        `${fixed(entry.indexWru / entry.items, 2)}${Object.keys(entry.indexes).length ? ` (${Object.keys(entry.indexes).join(', ')})` : ''}`,
      ]);
  out.push(
    table(
      ['Body', 'Receiver', 'Request', 'item bytes after', 'table WRU', 'index WRU'],
      results.costBySize.flatMap((size) => [
        ...unitRows(size.bytes, 'ours', size.units.ours),
        ...unitRows(size.bytes, 'Powertools', size.units.powertools),
        ...unitRows(size.bytes, 'lean', size.units.lean),
      ]),
    ),
  );

  out.push('\n**Scaling: the same figures at each load**\n');
  out.push(
    table(
      [
        'Load',
        'requests/delivery ours vs Powertools',
        'edge requests ours',
        'sweep requests/delivery ours',
        'reconciler requests per run',
        'cost per million ours vs Powertools',
        'twin throughput vs bare (deliveries/s)',
        'ratio (rounds: lowest–highest)',
      ],
      scaling.map((scale) => [
        `${scale.load} (${scale.deliveries.toLocaleString('en-US')})`,
        `${fixed(scale.ours.stages.total, 3)} vs ${fixed(scale.powertools.stages.total, 3)}`,
        fixed(scale.ours.stages.edge, 3),
        fixed(scale.ours.stages.sweep, 3),
        String(scale.ours.stages.reconcilerPerRun),
        `${dollars(scale.ours.cost.usdPerMillion)} vs ${dollars(scale.powertools.cost.usdPerMillion)}`,
        `${fixed(scale.throughput.twin.perSecond, 0)} vs ${fixed(scale.throughput.bare.perSecond, 0)}`,
        `${fixed(scale.throughput.ratio * 100, 0)}% (${fixed(Math.min(...scale.throughput.roundRatios) * 100, 0)}–${fixed(Math.max(...scale.throughput.roundRatios) * 100, 0)}%)`,
      ]),
    ),
  );
  out.push(`\nThroughput: ${results.throughput.conditions}.`);
  return out.join('\n');
}

/** The all-in bill: every line at each volume, the fixed ones amortized. */
function renderBill(results: BenchResults): string {
  const { facts, volumes, customMetrics, stored } = results.bill;
  const out: string[] = [];
  const [first] = volumes;
  out.push(
    `\n**What a team pays, all in, with the construct's defaults** (${sizeName(results.meta.options.bodyBytes)} bodies; the per-delivery lines from the ${results.requests.ours.run.deliveries}-delivery run, priced at the batch the rate gives; ` +
      `every default read from the template the construct synthesizes: event source batch size ${facts.eventSource.batchSize}, batching window ${facts.eventSource.batchingWindowSeconds} s, ` +
      `${facts.functions.filter((fn) => fn.traced).length} of ${facts.functions.length} functions traced, ${facts.alarmMetrics} alarm metrics, ${facts.compositeAlarms} composite alarm, ${facts.dashboards} dashboard, ${facts.secrets} secret, ` +
      `rows kept ${(facts.retentionSeconds / 86_400).toFixed(0)} days and results ${(facts.resultRetentionSeconds / 86_400).toFixed(0)} days after their last decision, point-in-time recovery on ${facts.pitrTables} tables)\n`,
  );
  const items = [...new Set(volumes.flatMap((volume) => volume.lines.map((entry) => entry.item)))];
  out.push(
    table(
      [
        'Item',
        ...volumes.map(
          (volume) => `$/M at ${volume.deliveriesPerMonth / 1e6} M a month (${fixed(volume.perSecond, 2)}/s, batches of ${fixed(volume.batch, 1)})`,
        ),
        `at ${first.deliveriesPerMonth / 1e6} M`,
      ],
      [
        ...items.map((item) => {
          const at = volumes.map((volume) => volume.lines.find((entry) => entry.item === item));
          const own = at[0];
          return [`${item}${own?.fixed ? ' (monthly, amortized)' : ''}`, ...at.map((entry) => (entry ? dollars(entry.usdPerMillion) : '—')), own?.note ?? ''];
        }),
        ['per-delivery lines alone', ...volumes.map((volume) => dollars(volume.perRequestUsdPerMillion)), ''],
        ['**all in**', ...volumes.map((volume) => `**${dollars(volume.usdPerMillion)}**`), `$${first.usdPerMonth.toFixed(2)} a month`],
      ],
    ),
  );
  out.push(
    `\nCustom metrics counted from the EMF the handlers wrote in the run (${customMetrics.length}): ${customMetrics.join(', ')}. ` +
      `DynamoDB stores ${fixed(stored.rows, 0)} B per delivery in the inbox table (its row, index entries and any body item) and ${fixed(stored.results, 0)} B in the results table. ` +
      "Not in the bill: X-Ray traces retrieved or scanned (only when someone looks), log storage after ingestion ($0.03 per GB-month for the log groups' retention), the free tiers, and the empty long polls of the event source on an idle queue (AWS does not publish how many pollers a standard queue gets).",
  );
  return out.join('\n');
}
