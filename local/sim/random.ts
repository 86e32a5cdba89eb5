/**
 * Seeded, reproducible randomness for the simulator (task durations, ids, sampled faults).
 * mulberry32: small, fast and good enough for simulation; never for anything secret.
 */
export class SeededRandom {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** Uniform in [min, max]. */
  between(min: number, max: number): number {
    return min + (max - min) * this.next();
  }

  /** Integer uniform in [min, max]. */
  int(min: number, max: number): number {
    return Math.floor(this.between(min, max + 1 - 1e-9));
  }

  /** `length` lowercase hex characters. */
  hex(length: number): string {
    let s = '';
    while (s.length < length) s += Math.floor(this.next() * 0x10000).toString(16).padStart(4, '0');
    return s.slice(0, length);
  }

  /** A version-4-shaped UUID. */
  uuid(): string {
    const h = this.hex(32);
    const variant = ((parseInt(h[16], 16) & 0x3) | 0x8).toString(16);
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
  }

  /** `length` decimal digits, the first one non-zero. */
  digits(length: number): string {
    let s = String(this.int(1, 9));
    while (s.length < length) s += String(this.int(0, 9));
    return s;
  }
}
