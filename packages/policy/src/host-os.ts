/** The three operating systems the policy model knows. Functions that depend on path or platform rules take one explicitly so every rule is testable on any host. */
export type HostOs = 'linux' | 'macos' | 'windows';

export function currentHostOs(platform: string = process.platform): HostOs {
  if (platform === 'darwin') return 'macos';
  if (platform === 'win32') return 'windows';
  return 'linux';
}
