/**
 * The twin's log files as the auditor reads them: the handlers' embedded metrics, the processor's
 * lines by event, and any line that carries a secret, a body or a signature.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Evidence } from './evidence';

export interface LogFile {
  /** The file's name within the folder. */
  readonly name: string;
  readonly lines: readonly string[];
}

/** The lines of each `.log` file in the folder (none when it does not exist). */
export function readLogs(logDir: string): LogFile[] {
  let names: string[];
  try {
    names = readdirSync(logDir).filter((name) => name.endsWith('.log'));
  } catch {
    return [];
  }
  return names.map((name) => ({ name, lines: readFileSync(join(logDir, name), 'utf8').split('\n') }));
}

/** Every metric of the handlers' embedded-metric-format lines, summed (per-provider documents add up to the inbox's). */
export function emfTotals(logs: readonly LogFile[]): Record<string, number> {
  const totals: Record<string, number> = {};
  for (const { lines } of logs) {
    for (const line of lines) {
      // A log line may be the document too (the verifier's delivery line): any JSON line with `_aws`.
      if (!line.startsWith('{') || !line.includes('"_aws"')) continue;
      const document = JSON.parse(line) as { _aws: { CloudWatchMetrics: Array<{ Metrics: Array<{ Name: string }> }> } } & Record<string, unknown>;
      for (const { Name } of document._aws.CloudWatchMetrics.flatMap((entry) => entry.Metrics)) {
        totals[Name] = (totals[Name] ?? 0) + Number(document[Name] ?? 0);
      }
    }
  }
  return totals;
}

/** The processor's log files. */
function processorLogs(logs: readonly LogFile[]): LogFile[] {
  return logs.filter((file) => /processor\.log$/i.test(file.name));
}

/** A processor log line's fields the audits read. */
export interface ProcessorLine {
  readonly time?: string;
  readonly message?: string;
  readonly eventRef?: string;
  readonly messageId?: string;
  readonly receiveCount?: number;
  readonly outboxResult?: string;
}

/** The processor's JSON log lines (its runtime's own lines, a timeout's, are plain text). */
export function processorLines(logs: readonly LogFile[]): ProcessorLine[] {
  return processorLogs(logs).flatMap((file) => file.lines.filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as ProcessorLine));
}

/** The processor's log lines with `message`, by event reference. */
export function countLinesByEvent(logs: readonly LogFile[], message: string): Map<string, number> {
  const counts = new Map<string, number>();
  const marker = `"message":${JSON.stringify(message)}`;
  for (const { lines } of processorLogs(logs)) {
    for (const line of lines) {
      if (!line.includes(marker)) continue;
      const ref = /"eventRef":"([^"]+)"/.exec(line)?.[1];
      if (ref) counts.set(ref, (counts.get(ref) ?? 0) + 1);
    }
  }
  return counts;
}

const CONTENT_MARK = /pii_[0-9a-f]{16}/;
const BASE64_MAC = /[A-Za-z0-9+/]{43}=/g;
const HEX_MAC = /\b[0-9a-f]{64}\b/g;

/** Lines (as `file:line: what`, never the content) that carry a secret, a body or a signature. */
export function scanLogs(logDir: string, sensitive: Evidence['sensitive'], logs: readonly LogFile[] = readLogs(logDir)): string[] {
  const leaks: string[] = [];
  for (const { name, lines } of logs) {
    lines.forEach((line, index) => {
      const where = `${name}:${index + 1}`;
      if (CONTENT_MARK.test(line)) leaks.push(`${where}: body content`);
      else if (sensitive.texts.some((text) => text.length >= 16 && line.includes(text))) leaks.push(`${where}: a secret or API key`);
      else if (/"(x-)?webhook-signature"\s*:/i.test(line)) leaks.push(`${where}: a signature header`);
      else if ([...(line.match(BASE64_MAC) ?? []), ...(line.match(HEX_MAC) ?? [])].some((token) => sensitive.signatureTokens.has(token)))
        leaks.push(`${where}: a signature`);
    });
  }
  return leaks;
}
