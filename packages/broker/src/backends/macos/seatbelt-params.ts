import { FsError } from '@fs-sandbox/policy';

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * The `-D KEY=VALUE` parameters of one profile. Every path reaches the profile this way, so the
 * profile text itself holds no caller-controlled characters and needs no quoting.
 */
export class SeatbeltParams {
  private readonly values = new Map<string, string>();

  /** Defines `key` (once) and returns the SBPL expression that reads it. */
  ref(key: string, value: string): string {
    const existing = this.values.get(key);
    if (existing !== undefined && existing !== value) {
      throw new Error(`seatbelt parameter ${key} defined twice with different values`);
    }
    this.values.set(key, checkedValue(key, value));
    return `(param "${key}")`;
  }

  entries(): Array<[string, string]> {
    return [...this.values.entries()];
  }
}

function checkedValue(key: string, value: string): string {
  // argv cannot carry NUL, and a path holding bytes that are not UTF-8 (kept as lone surrogates in
  // native path strings) would reach sandbox-exec as U+FFFD: the rule would name another file.
  if (value.includes('\0') || LONE_SURROGATE.test(value)) {
    throw new FsError(
      'sandbox_unavailable',
      `the Seatbelt sandbox cannot name ${JSON.stringify(value)} (${key}): it is not valid UTF-8 text`,
    );
  }
  return value;
}
