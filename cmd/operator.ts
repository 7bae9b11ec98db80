/** The Kubernetes operator: `node dist/cmd/operator.js` (charts/locus runs it). */
import { runOperator } from '../internal/operator/run-operator.js';

await runOperator();
