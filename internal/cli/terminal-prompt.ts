/** Asks a question on the terminal, on stderr so that stdout keeps only the JSON answers. */
import { createInterface } from 'node:readline/promises';

/** The line typed; empty when the input ends (Ctrl-D) before one is, which confirms nothing. */
export async function askOnTerminal(question: string): Promise<string> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return await new Promise<string>((resolve) => {
      rl.once('close', () => resolve(''));
      rl.question(question).then(resolve, () => resolve(''));
    });
  } finally {
    rl.close();
  }
}
