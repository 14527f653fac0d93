/**
 * The long robustness runs, outside CI's default test run (which keeps one fuzz pass and 8 crash rounds):
 *
 *   npx tsx bench/soak.ts                       fuzz 8 passes over every route, then 100 crash rounds
 *   npx tsx bench/soak.ts --fuzz-rounds 12 --crash-rounds 0
 *
 * Each is the test file itself (test/fuzz.test.ts, test/crash-load.test.ts) run by tap with more rounds, so
 * the soak checks exactly what CI checks; it prints each run's figures (the tests' comments) and its verdict.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

interface Outcome {
  ok: boolean;
  seconds: number;
  comments: string[];
  summary: string;
}

/** Runs one test file under tap with extra environment, without tap's per-file timeout. */
function runTest(file: string, env: Record<string, string>): Promise<Outcome> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn('npx', ['tap', '--timeout', '0', '--reporter', 'tap', file], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => {
      const lines = output.split('\n');
      resolve({
        ok: code === 0,
        seconds: (performance.now() - started) / 1000,
        comments: lines.filter((line) => /^\s*# (?!Subtest)/.test(line) && !/^\s*# (time=|No coverage)/.test(line)).map((line) => line.trim()),
        summary: lines.filter((line) => /^\s*not ok /.test(line)).slice(0, 20).join('\n'),
      });
    });
  });
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { 'fuzz-rounds': { type: 'string', default: '8' }, 'crash-rounds': { type: 'string', default: '100' } } });
  const runs: [string, string, Record<string, string>][] = [];
  if (Number(values['fuzz-rounds']) > 0) runs.push(['fuzz', 'test/fuzz.test.ts', { FUZZ_ROUNDS: values['fuzz-rounds']! }]);
  if (Number(values['crash-rounds']) > 0) runs.push(['crash', 'test/crash-load.test.ts', { CRASH_ROUNDS: values['crash-rounds']! }]);
  let failed = false;
  for (const [name, file, env] of runs) {
    console.log(`${name}: ${file} with ${JSON.stringify(env)} ...`);
    const outcome = await runTest(file, env);
    for (const comment of outcome.comments) console.log(`  ${comment}`);
    console.log(`${name}: ${outcome.ok ? 'passed' : 'FAILED'} in ${outcome.seconds.toFixed(0)} s`);
    if (!outcome.ok) console.log(outcome.summary);
    failed ||= !outcome.ok;
  }
  process.exitCode = failed ? 1 : 0;
}

await main();
