/**
 * A seeded pseudo-random generator (sfc32), so that a fault-injection run is repeatable from its
 * seed: ids, secrets, plans, jitter and fault decisions all draw from it. Independent streams
 * are derived by label (`stream('jitter')`), so that one consumer drawing more or less does not
 * shift what another draws.
 */
import { createHash } from 'node:crypto';

export class Random {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(readonly seed: number | string) {
    const bytes = createHash('sha256').update(String(seed)).digest();
    this.a = bytes.readUInt32LE(0);
    this.b = bytes.readUInt32LE(4);
    this.c = bytes.readUInt32LE(8);
    this.d = bytes.readUInt32LE(12);
    for (let i = 0; i < 12; i++) this.next();
  }

  /** An independent generator for one purpose, derived from this one's seed and a label. */
  stream(label: string): Random {
    return new Random(`${this.seed}/${label}`);
  }

  /** A float in [0, 1). */
  next(): number {
    this.a >>>= 0;
    this.b >>>= 0;
    this.c >>>= 0;
    this.d >>>= 0;
    let t = (this.a + this.b) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.d = (this.d + 1) | 0;
    t = (t + this.d) | 0;
    this.c = (this.c + t) | 0;
    return (t >>> 0) / 4294967296;
  }

  /** An integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  /** A float in [min, max). */
  between(min: number, max: number): number {
    return min + this.next() * (max - min);
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)];
  }

  /** `n` random bytes. */
  bytes(n: number): Buffer {
    const out = Buffer.alloc(n);
    for (let i = 0; i < n; i++) out[i] = this.int(256);
    return out;
  }

  /** `n` lower-case hex characters. */
  hex(n: number): string {
    return this.bytes(Math.ceil(n / 2))
      .toString('hex')
      .slice(0, n);
  }

  /** Shuffles `items` in place (Fisher–Yates) and returns it. */
  shuffle<T>(items: T[]): T[] {
    for (let i = items.length - 1; i > 0; i--) {
      const j = this.int(i + 1);
      [items[i], items[j]] = [items[j], items[i]];
    }
    return items;
  }
}
