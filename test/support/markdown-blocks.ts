/** The fenced blocks of a Markdown document, for the tests that run a document's examples. */

export interface Block {
  info: string;
  body: string;
  /** The 1-based line of the opening fence. */
  line: number;
}

/** The fenced blocks of a Markdown text, with their info strings and 1-based opening lines. */
export function fencedBlocks(markdown: string): Block[] {
  const blocks: Block[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)\s*$/.exec(lines[i] ?? '');
    if (open === null) continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && lines[i] !== '```'; i++) body.push(lines[i] ?? '');
    if (i >= lines.length) throw new Error(`the block opened on line ${start + 1} is not closed`);
    blocks.push({ info: open[1] ?? '', body: body.join('\n'), line: start + 1 });
  }
  return blocks;
}
