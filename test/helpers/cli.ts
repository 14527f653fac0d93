import { execFile } from 'node:child_process';
import { serverProgram } from './server-program.ts';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the command-line tool as an operator would (`chat-server ARGS`), in its own process. */
export function cli(...args: string[]): Promise<CliResult> {
  return cliWith({}, ...args);
}

/** The same, with extra environment variables, and what to write to its standard input. */
export function cliWith(env: Record<string, string>, ...args: string[]): Promise<CliResult> {
  return cliWithInput('', env, ...args);
}

export async function cliWithInput(input: string, env: Record<string, string>, ...args: string[]): Promise<CliResult> {
  const program = await serverProgram();
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [program, ...args], { env: { ...process.env, ...env } }, (error, stdout, stderr) => {
      resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr });
    });
    child.stdin?.end(input);
  });
}
