/**
 * A process that opens an SQLite store at a given instant and closes it again, for
 * test/integration/sqlite-shared.test.ts (several processes opening one new file at once).
 * Arguments: the file and the instant (epoch ms) to open at, spun for so that the processes
 * start together. Prints `ok`, or the error's code and message.
 */
import { openSqliteStore } from '../../internal/store/sqlite/sqlite-store.js';

async function main(): Promise<void> {
  const [file, atText] = process.argv.slice(2) as [string, string];
  const at = Number(atText);
  while (Date.now() < at) {
    // Spinning: a timer would start the processes up to a few ms apart.
  }
  try {
    const store = openSqliteStore(file, { ownership: 'shared' });
    await store.close();
    process.stdout.write('ok\n');
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    process.stdout.write(`${typeof code === 'string' ? code : 'error'}: ${err instanceof Error ? err.message : String(err)}\n`);
  }
}

await main();
