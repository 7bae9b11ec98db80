/** Asks a question on the terminal, on stderr so that stdout keeps only the JSON answers. */
import { createInterface } from 'node:readline/promises';

export async function askOnTerminal(question: string): Promise<string> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return await rl.question(question);
  } finally {
    rl.close();
  }
}
