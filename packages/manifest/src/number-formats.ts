/**
 * The number formats of generated schemas (what schemars and its kin write for Rust's integer and
 * float types), as the ranges they mean. Read by `breaks` (a format narrows a range like `minimum`
 * and `maximum` do) and by `standardSchema` (which writes the range in their place).
 *
 * `uint` and `int` are `usize`/`isize`, whose width depends on the target: only the sign is
 * certain. `float` is an f32; `double` bounds nothing a JSON number can exceed. Bounds are kept
 * as text: the 64- and 128-bit ones have more digits than a double holds.
 */
export const FORMAT_BOUNDS: Readonly<Record<string, readonly [string | null, string | null]>> = {
  int8: ['-128', '127'],
  int16: ['-32768', '32767'],
  int32: ['-2147483648', '2147483647'],
  int64: ['-9223372036854775808', '9223372036854775807'],
  int128: ['-170141183460469231731687303715884105728', '170141183460469231731687303715884105727'],
  uint8: ['0', '255'],
  uint16: ['0', '65535'],
  uint32: ['0', '4294967295'],
  uint64: ['0', '18446744073709551615'],
  uint128: ['0', '340282366920938463463374607431768211455'],
  uint: ['0', null],
  int: [null, null],
  float: ['-3.4028234663852886e38', '3.4028234663852886e38'],
  double: [null, null],
};

export const INTEGER_FORMATS: ReadonlySet<string> = new Set(Object.keys(FORMAT_BOUNDS).filter((f) => f !== 'float' && f !== 'double'));

/** Formats that bound numbers, as opposed to formats that constrain strings. */
export function isNumberFormat(format: unknown): format is string {
  return typeof format === 'string' && Object.hasOwn(FORMAT_BOUNDS, format);
}
