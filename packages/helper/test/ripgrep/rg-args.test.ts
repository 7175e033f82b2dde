import { describe, expect, it } from 'vitest';
import { globArgv, RIPGREP_THREADS, type SearchOptions, searchArgv } from '../../src/ripgrep/rg-args.js';

const SEARCH: SearchOptions = {
  path: '/w',
  pattern: 'needle',
  fixedStrings: false,
  caseSensitive: true,
  include: [],
  exclude: [],
  includeIgnored: false,
  includeHidden: false,
  contextLines: 0,
  filesOnly: false,
};

const FIXED = [
  '--no-config',
  '--no-pcre2',
  '--no-follow',
  '--no-messages',
  '--no-require-git',
  '--no-ignore-global',
];
const THREADS = ['--threads', String(RIPGREP_THREADS)];

describe('searchArgv', () => {
  it('starts with the fixed safety flags and ends with the pattern after -e and the root after --', () => {
    expect(searchArgv(SEARCH, [])).toEqual([
      ...FIXED,
      '--json',
      ...THREADS,
      '--case-sensitive',
      '-e',
      'needle',
      '--',
      '/w',
    ]);
  });

  it('never lets a pattern or a path that looks like a flag be read as one', () => {
    const argv = searchArgv({ ...SEARCH, pattern: '--pre=sh', path: '/-rf' }, []);
    expect(argv.slice(-4)).toEqual(['-e', '--pre=sh', '--', '/-rf']);
    expect(argv.filter((arg) => arg.startsWith('--pre'))).toEqual(['--pre=sh']);
  });

  it('maps every option to its ripgrep flag, request globs before the policy excludes (the later glob wins)', () => {
    const argv = searchArgv(
      {
        ...SEARCH,
        fixedStrings: true,
        caseSensitive: false,
        include: ['*.ts'],
        exclude: ['dist/**'],
        includeIgnored: true,
        includeHidden: true,
        contextLines: 3,
      },
      ['/secret'],
    );
    expect(argv).toEqual([
      ...FIXED,
      '--json',
      ...THREADS,
      '--hidden',
      '--no-ignore',
      '--ignore-case',
      '--fixed-strings',
      '--context',
      '3',
      '-g',
      '*.ts',
      '-g',
      '!dist/**',
      '-g',
      '!/secret',
      '-e',
      'needle',
      '--',
      '/w',
    ]);
  });

  it('stops at the first match of each file for filesOnly (context lines are not asked for)', () => {
    const argv = searchArgv({ ...SEARCH, filesOnly: true, contextLines: 2 }, []);
    expect(argv).toContain('--max-count');
    expect(argv).not.toContain('--context');
  });

  it('has no PCRE2, no config file, no symlink following, whatever the options', () => {
    const argv = searchArgv({ ...SEARCH, includeIgnored: true, includeHidden: true }, []);
    expect(argv).not.toContain('-P');
    expect(argv).not.toContain('--pcre2');
    expect(argv).not.toContain('-L');
    expect(argv).not.toContain('--follow');
  });
});

describe('globArgv', () => {
  it('lists files NUL-separated, the patterns as globs and the policy excludes after them', () => {
    expect(
      globArgv({ path: '/w', patterns: ['**/*.md', 'src/*'], includeIgnored: false, includeHidden: true }, [
        '/.git',
      ]),
    ).toEqual([
      ...FIXED,
      '--files',
      '--null',
      ...THREADS,
      '--hidden',
      '-g',
      '**/*.md',
      '-g',
      'src/*',
      '-g',
      '!/.git',
      '--',
      '/w',
    ]);
  });
});
