/**
 * docs/instructions.md is the language's reference: every `hivescript` block in it compiles, and
 * every `refused-hivescript` block is refused with exactly the message of the `text` block that
 * follows it.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { compileInstruction } from '../../internal/instructions/language/compile.js';

interface Block {
  info: string;
  body: string;
  line: number;
}

/** The fenced blocks of a Markdown text, with their info strings and 1-based opening lines. */
function fencedBlocks(markdown: string): Block[] {
  const blocks: Block[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)\s*$/.exec(lines[i] ?? '');
    if (open === null) continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && lines[i] !== '```'; i++) body.push(lines[i] ?? '');
    assert.ok(i < lines.length, `the block opened on line ${start + 1} is not closed`);
    blocks.push({ info: open[1] ?? '', body: body.join('\n'), line: start + 1 });
  }
  return blocks;
}

const blocks = fencedBlocks(readFileSync(new URL('../../../docs/instructions.md', import.meta.url), 'utf8'));

describe('docs/instructions.md', () => {
  const examples = blocks.filter((b) => b.info === 'hivescript');
  const refused = blocks.flatMap((b, i) => (b.info === 'refused-hivescript' ? [[b, blocks[i + 1]] as const] : []));

  it('has the examples and refusals this test runs', () => {
    assert.ok(examples.length >= 15, `${examples.length} hivescript blocks`);
    assert.ok(refused.length >= 5, `${refused.length} refused-hivescript blocks`);
  });

  for (const example of examples) {
    it(`compiles the example on line ${example.line}`, () => {
      assert.doesNotThrow(() => compileInstruction(example.body));
    });
  }

  for (const [source, message] of refused) {
    it(`refuses the example on line ${source.line} with the message shown`, () => {
      assert.equal(message?.info, 'text', `a text block with the message follows line ${source.line}`);
      assert.throws(() => compileInstruction(source.body), (error: Error) => {
        assert.equal(error.message, message.body.trim());
        return true;
      });
    });
  }
});
