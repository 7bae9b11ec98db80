/**
 * Every file the docs refer to is in the repository: relative markdown links, and file
 * paths written in the text (`docs/api.md`, `internal/errors.ts`, `decisions.md`), in
 * README.md and every markdown file under docs/. A link resolves from the document's
 * folder; a path in the text from there, the repository root or `internal/` (the code
 * pages say `store/cursor.ts`); a bare file name (`codec.ts`, `decisions.md`, as the
 * text names a file it has just placed) must name some file of the repository.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../../', import.meta.url));

/** Files under `dir` whose name ends in `suffix`, skipping what is not the repository's own. */
function filesUnder(dir: string, suffix: string, out: string[]): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (['node_modules', 'dist', '.git'].includes(entry.name)) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) filesUnder(path, suffix, out);
    else if (entry.name.endsWith(suffix)) out.push(path);
  }
  return out;
}

/** Relative link targets (no scheme, no pure anchor), without their #anchor. */
export function linkTargets(markdown: string): string[] {
  const out: string[] = [];
  for (const match of markdown.matchAll(/\]\(([^)\s]+)\)/g)) {
    const target = match[1] ?? '';
    if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('#')) continue;
    out.push(decodeURIComponent(target.split('#')[0] ?? ''));
  }
  return out;
}

/** File paths named in the text: a word of path characters ending in a file extension the repository uses (not one after a placeholder such as `<file>`). */
export function pathMentions(markdown: string): string[] {
  const out = new Set<string>();
  const text = markdown.replace(/```[\s\S]*?```/g, ''); // commands and payloads are not references
  for (const match of text.matchAll(/(?<![\w/.$>-])((?:[\w-]+\/)*[\w-]+\.(?:md|ts|mjs|json))(?![\w/])/g)) {
    out.add(match[1] ?? '');
  }
  return [...out];
}

const files = [join(root, 'README.md'), ...filesUnder(join(root, 'docs'), '.md', [])];
const basenames = new Set(filesUnder(root, '', []).map((path) => basename(path)));

function exists(target: string, doc: string, link: boolean): boolean {
  if (link) return existsSync(join(dirname(doc), target));
  if (!target.includes('/')) return basenames.has(target);
  return [dirname(doc), root, join(root, 'internal')].some((base) => existsSync(join(base, target)));
}

void describe('documentation references', () => {
  void it('finds the documents and the references in them', () => {
    assert.ok(files.length >= 5, `found ${files.length} documents`);
    assert.deepEqual(linkTargets('[a](docs/api.md#x) [b](https://x.org/y.md) [c](#here)'), ['docs/api.md']);
    assert.deepEqual(pathMentions('see `decisions.md` and internal/errors.ts, not $x.ts\n```sh\ncat nothing.md\n```'), ['decisions.md', 'internal/errors.ts']);
  });

  for (const file of files) {
    const name = relative(root, file);
    void it(`every file ${name} refers to exists in the repository`, () => {
      const markdown = readFileSync(file, 'utf8');
      const missing = [
        ...linkTargets(markdown).filter((target) => !exists(target, file, true)),
        ...pathMentions(markdown).filter((target) => !exists(target, file, false)),
      ];
      assert.deepEqual(missing, [], `${name} refers to files that are not in the repository`);
    });
  }
});
