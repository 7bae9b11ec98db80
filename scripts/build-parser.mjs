// Generates the HiveScript parser (dist/internal/instructions/language/hivescript-parser.js)
// from its grammar with Peggy, as part of `npm run build` after tsc. The parser is generated
// rather than committed so that the grammar file is the one source; its types are stated in
// internal/instructions/language/hivescript-parser.d.ts.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import peggy from 'peggy';

const grammarFile = new URL('../internal/instructions/language/hivescript.peggy', import.meta.url);
const outDir = new URL('../dist/internal/instructions/language/', import.meta.url);
const source = peggy.generate(readFileSync(grammarFile, 'utf8'), {
  output: 'source',
  format: 'es',
  grammarSource: 'internal/instructions/language/hivescript.peggy',
});
mkdirSync(outDir, { recursive: true });
writeFileSync(new URL('hivescript-parser.js', outDir), source);
