/**
 * The fault-injection run (`npm run chaos`, and a small fixed-seed run in `npm test`): the local
 * twin, with compressed timing and polling against the fake provider APIs, receives the
 * deliveries of three simulated providers (Answerline, Echonova, a Standard Webhooks sender with
 * an authoritative read) while every failure mode the design lists (docs/DESIGN.md#failure-modes)
 * is injected; then the auditor checks, from each provider's own record of what it completed,
 * that nothing was lost, nothing was processed twice, every job has the right winner, no altered
 * body was accepted and no log line carries a secret, a body or a signature.
 *
 * In four steps: set up (setup.ts), drive the plan (drive.ts), drain until the inbox has settled
 * (drain.ts), gather the evidence (evidence.ts); then audit it (audit/).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sleep } from '../providers/sender';
import { audit, ChaosReport } from './audit';
import { drain } from './drain';
import { startDriving } from './drive';
import { gatherEvidence } from './evidence';
import { makePlan } from './plan';
import { chaosProfile } from './profile';
import { ChaosRig, setUp } from './setup';

export interface ChaosOptions {
  readonly seed: number;
  /** Result deliveries the three providers complete (tests, altered copies and forgeries come on top). */
  readonly deliveries: number;
  /** Compresses time further (the providers' schedules, the outages, the twin's timeouts). @default 1 */
  readonly speed?: number;
  /** Result deliveries per second at most (the run slows down when the twin falls behind). @default 70 (40 when speed ≥ 2) */
  readonly ratePerSecond?: number;
  /** Where the twin writes its logs and ops config. @default a new temporary folder, removed afterwards unless keepState */
  readonly stateDir?: string;
  readonly keepState?: boolean;
  /** Progress lines. @default none */
  readonly log?: (line: string) => void;
  /** How long to wait for the inbox to settle after the providers are done. @default 180 s */
  readonly drainTimeoutMs?: number;
}

export async function runChaos(options: ChaosOptions): Promise<ChaosReport> {
  const started = Date.now();
  const log = options.log ?? (() => undefined);
  const plan = makePlan(options.seed, options.deliveries, chaosProfile(options.speed ?? 1, options.ratePerSecond));
  const stateDir = options.stateDir ?? mkdtempSync(join(tmpdir(), 'webhook-inbox-chaos-'));
  let rig: ChaosRig | undefined;
  try {
    rig = await setUp({ seed: options.seed, plan, stateDir, log });
    const driving = startDriving(rig);
    try {
      await driving.done;
      await drain(rig, options.drainTimeoutMs ?? 180_000);
    } finally {
      driving.stop();
    }
    // Let in-flight work finish what it started: one more reconciler run waits behind the one in
    // progress (one environment), so every run's metrics are flushed.
    await rig.twin.reconcileNow().catch(() => undefined);
    await sleep(1_000);
    const evidence = await gatherEvidence(rig, driving.adversary);
    await rig.stop();
    evidence.elapsedMs = Date.now() - started;
    return audit(evidence);
  } finally {
    await rig?.stop();
    if (!options.keepState && !options.stateDir) rmSync(stateDir, { recursive: true, force: true });
  }
}
