/**
 * The check at the end of a test run (scripts/run-tests.mjs): no secret the tests used (the
 * `secrets-*.txt` files test/support/test-logs.ts writes) appears in any log of the run (every
 * other file of the directory). Findings name the file, the line and which secret (by its
 * number and length), never the secret itself.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface Finding {
  file: string;
  line: number;
  /** 1-based position of the secret in the sorted list of recorded secrets. */
  secret: number;
  secretLength: number;
}

export interface LogCheck {
  logFiles: number;
  logLines: number;
  secrets: number;
  findings: Finding[];
}

function lineOf(text: string, index: number): number {
  let line = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < index; i = text.indexOf('\n', i + 1)) line++;
  return line;
}

function countLines(text: string): number {
  if (text === '') return 0;
  let lines = 0;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) lines++;
  return text.endsWith('\n') ? lines : lines + 1;
}

/** Reads every secret and every log of `dir` and reports where a secret appears. */
export function checkLogsForSecrets(dir: string): LogCheck {
  const files = readdirSync(dir).sort();
  const secretSet = new Set<string>();
  for (const file of files.filter((f) => /^secrets-.*\.txt$/.test(f))) {
    for (const secret of readFileSync(join(dir, file), 'utf8').split('\n')) if (secret !== '') secretSet.add(secret);
  }
  const secrets = [...secretSet].sort();
  const logs = files.filter((f) => !/^secrets-.*\.txt$/.test(f));
  const result: LogCheck = { logFiles: logs.length, logLines: 0, secrets: secrets.length, findings: [] };
  for (const file of logs) {
    const text = readFileSync(join(dir, file), 'utf8');
    result.logLines += countLines(text);
    secrets.forEach((secret, i) => {
      for (let at = text.indexOf(secret); at !== -1; at = text.indexOf(secret, at + 1)) {
        result.findings.push({ file, line: lineOf(text, at), secret: i + 1, secretLength: secret.length });
      }
    });
  }
  return result;
}

/** The report line(s) for a check: a summary, then one line per finding. */
export function describeLogCheck(check: LogCheck, dir: string): string {
  const summary = `log secrets check: ${check.logLines} log lines in ${check.logFiles} files, ${check.secrets} secrets (tokens, Authorization values): ${check.findings.length === 0 ? 'none found' : `${check.findings.length} found`}`;
  const found = check.findings.map(
    (f) => `  ${join(dir, f.file)}:${f.line} contains recorded secret #${f.secret} (${f.secretLength} characters)`,
  );
  return [summary, ...found].join('\n');
}
