/**
 * Python's `marshal` format (version 4, Python >= 3.4), for plain data only: the reward worker's wire. marshal is
 * several times cheaper than JSON for Python to read and write, and for a reward function that takes microseconds per
 * sample the codec is most of the cost. Written: null/undefined, booleans, numbers, strings, arrays, plain objects.
 * Read: everything `marshal.dumps` makes of data (ints of any size, floats, complex, bytes, str, tuples, lists, dicts,
 * sets, references); a code object or an unknown type is an error.
 */

const FLAG_REF = 0x80;

/**
 * Encodes JSON-like data as marshal bytes; `framed`: preceded by their length (4 bytes, little-endian). Integers that are
 * not safe in JavaScript go as floats.
 */
export function encodeMarshal(value: unknown, opts: { framed?: boolean } = {}): Buffer {
  const w = new Writer(opts.framed ? 4 : 0);
  w.value(value);
  return w.done(opts.framed ?? false);
}

/** Strings this short are written once and then referred to: labels, data sources and keys repeat in every sample. */
const SHARED_STRING = 32;

class Writer {
  private buf = Buffer.allocUnsafe(1 << 16);
  private readonly shared = new Map<string, number>();

  constructor(private pos: number) {}

  done(framed: boolean): Buffer {
    if (framed) this.buf.writeUInt32LE(this.pos - 4, 0);
    return this.buf.subarray(0, this.pos);
  }

  private room(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n));
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }

  private byte(b: number): void {
    this.room(1);
    this.buf[this.pos++] = b;
  }

  private int32(type: number, n: number): void {
    this.room(5);
    this.buf[this.pos] = type;
    this.buf.writeInt32LE(n, this.pos + 1);
    this.pos += 5;
  }

  value(v: unknown): void {
    if (v === null || v === undefined) return this.byte(0x4e); // N
    switch (typeof v) {
      case 'boolean':
        return this.byte(v ? 0x54 : 0x46); // T F
      case 'string':
        return this.string(v);
      case 'number':
        if (Number.isInteger(v) && v >= -0x80000000 && v <= 0x7fffffff) return this.int32(0x69, v); // i
        if (Number.isSafeInteger(v)) return this.long(v);
        this.room(9);
        this.buf[this.pos] = 0x67; // g
        this.buf.writeDoubleLE(v, this.pos + 1);
        this.pos += 9;
        return;
      case 'bigint':
        return this.value(Number(v));
      case 'object': {
        if (Array.isArray(v)) {
          this.int32(0x5b, v.length); // [
          for (const item of v) this.value(item);
          return;
        }
        this.byte(0x7b); // {
        const obj = v as Record<string, unknown>;
        for (const key of Object.keys(obj)) {
          if (obj[key] === undefined) continue;
          this.string(key);
          this.value(obj[key]);
        }
        return this.byte(0x30); // 0 ends a dict
      }
      default:
        throw new TypeError(`cannot send a ${typeof v} to Python`);
    }
  }

  /** ASCII as Python's own ASCII type (Python reads it without decoding), anything else as UTF-8. */
  private string(v: string): void {
    this.room(5 + v.length * 3);
    const head = this.pos;
    let flag = 0;
    if (v.length <= SHARED_STRING) {
      const ref = this.shared.get(v);
      if (ref !== undefined) return this.int32(0x72, ref); // r
      this.shared.set(v, this.shared.size);
      flag = FLAG_REF;
    }
    const bytes = this.buf.write(v, head + 5, 'utf8');
    this.buf[head] = (bytes === v.length ? 0x61 : 0x75) | flag; // a (ASCII), u
    this.buf.writeInt32LE(bytes, head + 1);
    this.pos = head + 5 + bytes;
  }

  /** An int as 15-bit digits, least significant first; the digit count carries the sign. */
  private long(v: number): void {
    const digits: number[] = [];
    for (let rest = Math.abs(v); rest > 0; rest = Math.floor(rest / 32768)) digits.push(rest % 32768);
    this.int32(0x6c, v < 0 ? -digits.length : digits.length); // l
    this.room(digits.length * 2);
    for (const d of digits) {
      this.buf.writeUInt16LE(d, this.pos);
      this.pos += 2;
    }
  }
}

interface Decoded {
  value: unknown;
  /** Whether a NaN or an infinity was read (JSON cannot hold them). */
  nonFinite: boolean;
}

/** Decodes one marshal value. Sets become arrays, bytes latin-1 strings, complex numbers strings like Python's repr. */
export function decodeMarshal(buf: Buffer): Decoded {
  const r = new Reader(buf);
  const value = r.value();
  if (r.pos !== buf.length) throw new Error(`marshal: ${buf.length - r.pos} bytes after the value`);
  return { value, nonFinite: r.nonFinite };
}

class Reader {
  pos = 0;
  nonFinite = false;
  private readonly refs: unknown[] = [];

  constructor(private readonly buf: Buffer) {}

  private need(n: number): void {
    if (this.pos + n > this.buf.length) throw new Error(`marshal: truncated at byte ${this.pos}`);
  }

  private int32(): number {
    this.need(4);
    const n = this.buf.readInt32LE(this.pos);
    this.pos += 4;
    return n;
  }

  private float(): number {
    this.need(8);
    const x = this.buf.readDoubleLE(this.pos);
    this.pos += 8;
    if (!Number.isFinite(x)) this.nonFinite = true;
    return x;
  }

  private text(n: number, encoding: 'utf8' | 'latin1'): string {
    this.need(n);
    const s = this.buf.toString(encoding, this.pos, this.pos + n);
    this.pos += n;
    return s;
  }

  value(): unknown {
    this.need(1);
    const code = this.buf[this.pos++]!;
    // A flagged object takes its reference slot before its contents are read (a container may hold itself).
    const slot = code & FLAG_REF ? this.refs.push(undefined) - 1 : -1;
    const v = this.read(code & ~FLAG_REF, slot);
    if (slot >= 0) this.refs[slot] = v;
    return v;
  }

  private read(type: number, slot: number): unknown {
    switch (type) {
      case 0x4e: // N
        return null;
      case 0x54: // T
        return true;
      case 0x46: // F
        return false;
      case 0x69: // i
        return this.int32();
      case 0x6c: {
        // l
        const n = this.int32();
        const len = Math.abs(n);
        this.need(len * 2);
        let v = 0;
        for (let k = len - 1; k >= 0; k--) v = v * 32768 + this.buf.readUInt16LE(this.pos + k * 2);
        this.pos += len * 2;
        return n < 0 ? -v : v;
      }
      case 0x67: // g
        return this.float();
      case 0x79: {
        // y: complex
        const re = this.float();
        const im = this.float();
        return `(${re}${im < 0 ? '-' : '+'}${Math.abs(im)}j)`;
      }
      case 0x75: // u
      case 0x74: // t
        return this.text(this.int32(), 'utf8');
      case 0x61: // a
      case 0x41: // A
      case 0x73: // s: bytes
        return this.text(this.int32(), 'latin1');
      case 0x7a: // z
      case 0x5a: // Z
        this.need(1);
        return this.text(this.buf[this.pos++]!, 'latin1');
      case 0x72: {
        // r
        const i = this.int32();
        if (i < 0 || i >= this.refs.length) throw new Error(`marshal: bad reference ${i}`);
        return this.refs[i];
      }
      case 0x29: // ): small tuple
        this.need(1);
        return this.items(this.buf[this.pos++]!, slot);
      case 0x28: // (
      case 0x5b: // [
      case 0x3c: // <
      case 0x3e: // >
        return this.items(this.int32(), slot);
      case 0x7b: {
        // {
        const obj: Record<string, unknown> = {};
        if (slot >= 0) this.refs[slot] = obj;
        for (;;) {
          this.need(1);
          if (this.buf[this.pos] === 0x30) {
            this.pos++;
            return obj;
          }
          const key = this.value();
          const name = typeof key === 'string' ? key : String(key);
          const item = this.value();
          // A key named __proto__ is data, as JSON.parse makes it, not the object's prototype.
          if (name === '__proto__') Object.defineProperty(obj, name, { value: item, enumerable: true, writable: true, configurable: true });
          else obj[name] = item;
        }
      }
      case 0x53: // S: StopIteration
        return 'StopIteration';
      case 0x2e: // .: Ellipsis
        return 'Ellipsis';
      default:
        throw new Error(`marshal: unsupported type ${JSON.stringify(String.fromCharCode(type))} at byte ${this.pos - 1}`);
    }
  }

  private items(n: number, slot: number): unknown[] {
    if (n < 0) throw new Error(`marshal: negative length at byte ${this.pos}`);
    const out = new Array<unknown>(n);
    if (slot >= 0) this.refs[slot] = out;
    for (let k = 0; k < n; k++) out[k] = this.value();
    return out;
  }
}
