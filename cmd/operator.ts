/**
 * The Kubernetes operator: `node dist/cmd/operator.js` (charts/locus runs it). Configured by
 * environment variables only: `--help` (or `-h`) lists them and starts nothing; any other
 * argument is refused rather than ignored, so a mistyped flag does not start an operator.
 */
import { asksForHelp } from '../internal/cli/cli-help.js';
import { operatorUsage } from '../internal/operator/operator-help.js';
import { runOperator } from '../internal/operator/run-operator.js';

const argv = process.argv.slice(2);
if (asksForHelp(argv)) {
  process.stdout.write(operatorUsage);
} else if (argv.length > 0) {
  process.stderr.write(`locus operator: unexpected argument ${JSON.stringify(argv[0])}; it is configured by environment variables\n\n${operatorUsage}`);
  process.exitCode = 2;
} else {
  await runOperator();
}
