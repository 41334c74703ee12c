/**
 * PostgreSQL `numeric` in binary COPY form → a DuckDB DECIMAL's scaled
 * integer, or the value's text. The wire form is base-10000 digits:
 * `int16 ndigits, int16 weight, uint16 sign, int16 dscale, int16 digits[]`,
 * value = Σ digits[i] × 10000^(weight − i).
 *
 * Scaling to the column's scale rounds half away from zero past it (as
 * both PostgreSQL and DuckDB's text → DECIMAL cast do); a value with more
 * integer digits than the column holds, NaN or ±Infinity is an error, as
 * loading its text into the DECIMAL column would be.
 */
import { EngineError } from '../errors.js';

const POSITIVE = 0x0000;
const NEGATIVE = 0x4000;
const NAN = 0xc000;
const PLUS_INFINITY = 0xd000;
const MINUS_INFINITY = 0xf000;

/** 10^0 … 10^22: every one an exact double. */
const POW10: readonly number[] = Array.from({ length: 23 }, (_, i) => 10 ** i);

function special(sign: number): string | undefined {
  if (sign === NAN) return 'NaN';
  if (sign === PLUS_INFINITY) return 'Infinity';
  if (sign === MINUS_INFINITY) return '-Infinity';
  if (sign !== POSITIVE && sign !== NEGATIVE) throw new EngineError('node', `numeric with an unknown sign word 0x${sign.toString(16)} in the COPY stream`);
  return undefined;
}

/** The value's text as PostgreSQL prints it (`-12.3400`, `0.05`, `NaN`). */
export function numericText(buf: DataView, at: number): string {
  const nd = buf.getInt16(at);
  const weight = buf.getInt16(at + 2);
  const sign = buf.getUint16(at + 4);
  const dscale = buf.getInt16(at + 6);
  const named = special(sign);
  if (named !== undefined) return named;
  const digit = (i: number) => (i >= 0 && i < nd ? buf.getUint16(at + 8 + 2 * i) : 0);
  let text = sign === NEGATIVE ? '-' : '';
  if (weight < 0) text += '0';
  else for (let i = 0; i <= weight; i++) text += i === 0 ? String(digit(0)) : String(digit(i)).padStart(4, '0');
  if (dscale > 0) {
    let fraction = '';
    for (let i = weight + 1; fraction.length < dscale; i++) fraction += String(digit(i)).padStart(4, '0');
    text += `.${fraction.slice(0, dscale)}`;
  }
  return text;
}

function outOfRange(buf: DataView, at: number, precision: number, scale: number): EngineError {
  return new EngineError('node', `numeric value ${numericText(buf, at)} does not fit DECIMAL(${precision},${scale})`);
}

/**
 * The value × 10^scale as an integer (a number when exact, else a bigint),
 * rounded half away from zero; throws when it needs more than `precision`
 * digits or is not a finite number.
 */
export function numericScaled(buf: DataView, at: number, precision: number, scale: number): number | bigint {
  const nd = buf.getInt16(at);
  const weight = buf.getInt16(at + 2);
  const sign = buf.getUint16(at + 4);
  if (special(sign) !== undefined) throw new EngineError('node', `numeric value ${numericText(buf, at)} cannot be stored in DECIMAL(${precision},${scale})`);
  let v = 0;
  let roundUp = false;
  for (let i = 0; i < nd; i++) {
    const d = buf.getUint16(at + 8 + 2 * i);
    const e = 4 * (weight - i) + scale;
    if (e >= 0) {
      if (e > 22) return numericScaledBig(buf, at, precision, scale);
      v += d * POW10[e]!;
      continue;
    }
    // The first digit reaching past the scale: keep its leading part, round on the next decimal digit.
    if (e > -4) {
      const keep = Math.floor(d / POW10[-e]!);
      v += keep;
      roundUp = Math.floor((d - keep * POW10[-e]!) / POW10[-e - 1]!) >= 5;
    } else if (e === -4) roundUp = d >= 5000;
    break;
  }
  if (v > Number.MAX_SAFE_INTEGER) return numericScaledBig(buf, at, precision, scale);
  if (roundUp) v += 1;
  if (precision <= 15 && v >= POW10[precision]!) throw outOfRange(buf, at, precision, scale);
  return sign === NEGATIVE ? -v : v;
}

/** `numericScaled` in bigint arithmetic: values past 2^53 (DECIMAL wider than 15 digits). */
function numericScaledBig(buf: DataView, at: number, precision: number, scale: number): bigint {
  const nd = buf.getInt16(at);
  const weight = buf.getInt16(at + 2);
  const sign = buf.getUint16(at + 4);
  let v = 0n;
  let roundUp = false;
  for (let i = 0; i < nd; i++) {
    const d = buf.getUint16(at + 8 + 2 * i);
    const e = 4 * (weight - i) + scale;
    if (e >= 0) {
      v += BigInt(d) * 10n ** BigInt(e);
      continue;
    }
    if (e > -4) {
      const keep = Math.floor(d / POW10[-e]!);
      v += BigInt(keep);
      roundUp = Math.floor((d - keep * POW10[-e]!) / POW10[-e - 1]!) >= 5;
    } else if (e === -4) roundUp = d >= 5000;
    break;
  }
  if (roundUp) v += 1n;
  if (v >= 10n ** BigInt(precision)) throw outOfRange(buf, at, precision, scale);
  return sign === NEGATIVE ? -v : v;
}
