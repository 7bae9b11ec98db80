#!/usr/bin/env node
/** The `locus` command: admin CLI, and `locus serve` to run the server. */
import { runCli } from '../internal/cli/admin-cli.js';
import { asksForHelp } from '../internal/cli/cli-help.js';
import { askOnTerminal } from '../internal/cli/terminal-prompt.js';
import { runServer } from '../internal/run-server.js';

const argv = process.argv.slice(2);
if (argv[0] === 'serve' && !asksForHelp(argv)) {
  await runServer(argv.slice(1));
} else {
  process.exitCode = await runCli(argv, process.env, {
    out: (line) => process.stdout.write(line + '\n'),
    err: (line) => process.stderr.write(line + '\n'),
    isTTY: process.stdin.isTTY === true,
    prompt: askOnTerminal,
  });
}
