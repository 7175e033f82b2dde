import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO } from '../support/build.js';
import { anchorsOf, docPages, linksOf, shellCommands } from '../support/markdown.js';

/**
 * Every relative link in the docs leads somewhere: the file exists, and a `#fragment` names a
 * heading of that page as GitHub spells its anchor. A page moved or a heading renamed fails here
 * instead of in a reader's browser.
 */
describe('links in the docs', () => {
  const pages = docPages();

  it('finds the pages and their links', () => {
    expect(pages.map((page) => relative(REPO, page))).toEqual(
      expect.arrayContaining(['README.md', 'docs/architecture.md', 'docs/cli.md', 'docs/limits.md']),
    );
    expect(pages.flatMap((page) => linksOf(readFileSync(page, 'utf8'))).length).toBeGreaterThan(30);
  });

  it.each(pages.map((page) => [relative(REPO, page), page] as const))(
    '%s: every relative link resolves',
    (_, page) => {
      const broken: string[] = [];
      for (const link of linksOf(readFileSync(page, 'utf8'))) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(link)) continue; // https:, mailto:: not ours to check offline
        const [path = '', fragment] = link.split('#', 2);
        const target = path === '' ? page : join(dirname(page), decodeURIComponent(path));
        if (!existsSync(target)) {
          broken.push(`${link}: no such file`);
          continue;
        }
        if (fragment === undefined) continue;
        if (!statSync(target).isFile() || !target.endsWith('.md')) {
          broken.push(`${link}: an anchor into a file that is not a Markdown page`);
          continue;
        }
        if (!anchorsOf(readFileSync(target, 'utf8')).has(fragment))
          broken.push(`${link}: no heading #${fragment}`);
      }
      expect(broken).toEqual([]);
    },
  );

  it('spells anchors as GitHub does, and reads links and commands as written', () => {
    expect([
      ...anchorsOf('## Search and glob: `fs/search`, `fs/glob`\n## `explain` and `doctor`\n## A\n## A\n'),
    ]).toEqual(['search-and-glob-fssearch-fsglob', 'explain-and-doctor', 'a', 'a-1']);
    expect(linksOf('see [a\nb](x.md#y) and `[c](d.md)`\n```\n[e](f.md)\n```\n')).toEqual(['x.md#y']);
    expect(shellCommands("# note\na 'b\n# not a comment' # comment\nc \\\n  d\n\ne '#x' f#g # h\n")).toEqual([
      "a 'b\n# not a comment'",
      'c \\\n  d',
      "e '#x' f#g",
    ]);
  });
});
