/**
 * docs/instructions.md is the language's reference: every `hivescript` block in it compiles, and
 * every `refused-hivescript` block is refused with exactly the message of the `text` block that
 * follows it.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { compileInstruction } from '../../internal/instructions/language/compile.js';
import { fencedBlocks } from '../support/markdown-blocks.js';

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
