import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { REPO } from './build.js';

/** The Markdown pages: the README, bench/RESULTS.md, docs/ and each package's README. */
export function docPages(): string[] {
  const below = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) return below(path);
      return entry.name.endsWith('.md') ? [path] : [];
    });
  const packages = readdirSync(join(REPO, 'packages'))
    .map((name) => join(REPO, 'packages', name, 'README.md'))
    .filter((path) => existsSync(path));
  return [join(REPO, 'README.md'), join(REPO, 'bench/RESULTS.md'), ...below(join(REPO, 'docs')), ...packages];
}

const FENCE = /^```([^\n]*)\n([\s\S]*?)^```[^\n]*$/gm;

export interface CodeBlock {
  /** The page, relative to the repository. */
  page: string;
  /** The fence's info string (`sh`, `ts`, `json`, …). */
  lang: string;
  text: string;
}

/** Every fenced code block of every page, in page order. */
export function codeBlocks(): CodeBlock[] {
  return docPages().flatMap((page) =>
    [...readFileSync(page, 'utf8').matchAll(FENCE)].map((match) => ({
      page: relative(REPO, page),
      lang: (match[1] ?? '').trim(),
      text: match[2] ?? '',
    })),
  );
}

/** The text outside fenced code blocks and inline code spans, where a link is a link. */
export function prose(markdown: string): string {
  return markdown.replace(FENCE, '').replace(/`[^`\n]*`/g, '');
}

/** GitHub's anchor for each heading: lower case, punctuation dropped, spaces as hyphens, repeats numbered. */
export function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const [, heading] of markdown.replace(FENCE, '').matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const slug = (heading as string)
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const times = seen.get(slug) ?? 0;
    seen.set(slug, times + 1);
    anchors.add(times === 0 ? slug : `${slug}-${times}`);
  }
  for (const [, id] of markdown.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(id as string);
  return anchors;
}

/** The link targets of a page: `[text](target)`, the text possibly across lines. */
export function linksOf(markdown: string): string[] {
  return [...prose(markdown).matchAll(/\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map(
    (match) => match[1] as string,
  );
}

/**
 * The commands of a shell block, as a shell reads them: comment lines dropped, a command running
 * on while a quote is open or a line ends in a backslash, each with its trailing comment removed.
 */
export function shellCommands(text: string): string[] {
  const commands: string[] = [];
  let current = '';
  for (const line of text.split('\n')) {
    if (current === '' && (line.trim() === '' || line.trim().startsWith('#'))) continue;
    current = current === '' ? line : `${current}\n${line}`;
    const { open, code } = scanQuotes(current);
    if (open || current.endsWith('\\')) continue;
    commands.push(code.trimEnd());
    current = '';
  }
  if (current !== '') commands.push(current);
  return commands;
}

/** Whether a quote is still open at the end of `text`, and `text` without a trailing `# comment`. */
function scanQuotes(text: string): { open: boolean; code: string } {
  let quote: string | null = null;
  for (let i = 0; i < text.length; i++) {
    const char = text[i] as string;
    if (quote !== null) {
      if (char === quote) quote = null;
      else if (char === '\\' && quote === '"') i++;
    } else if (char === "'" || char === '"') quote = char;
    else if (char === '\\') i++;
    else if (char === '#' && (i === 0 || /\s/.test(text[i - 1] as string)))
      return { open: false, code: text.slice(0, i) };
  }
  return { open: quote !== null, code: text };
}
