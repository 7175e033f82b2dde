/**
 * Temporary files of a sandboxed write carry the request's tag (24 random hex digits the broker
 * draws): `.fs-sandbox-<tag>-<n>.tmp`. A helper killed mid-write cannot remove its temporary file;
 * the broker then runs `fs/removeTemps` with the same tag, which removes exactly those names and
 * nothing anyone else could have made (nobody else knows the tag).
 */
export const TEMP_TAG = /^[0-9a-f]{24}$/;

const PREFIX = '.fs-sandbox-';

export function taggedTempName(tag: string, counter: number): string {
  return `${PREFIX}${tag}-${counter.toString(36)}.tmp`;
}

export function isTaggedTempName(name: string, tag: string): boolean {
  return name.startsWith(`${PREFIX}${tag}-`) && name.endsWith('.tmp');
}

/**
 * Every temporary name the helper makes (tagged, or untagged in-process: `.fs-sandbox-<pid>-<n>-<random>.tmp`).
 * A write handle's staging file is one of them; the helper accepts no other name as one.
 */
export const STAGED_NAME = /^\.fs-sandbox-[0-9a-z-]{1,64}\.tmp$/;
