import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = process.env.MEDRL_ROOT ?? join(__dirname, '../../..');
const CLI = join(ROOT, 'dist/cli.js');
const TIME = '/usr/bin/time';

/**
 * Runs the packaged `medrl` CLI and measures its own peak RSS (the node process, not the python3 worker it starts): GNU
 * time's "Maximum resident set size" where it is installed, else the kernel's high-water mark (VmHWM) polled until exit.
 */
export function cliPeak(args: string[], cwd: string): Promise<{ code: number | null; stdout: Buffer; stderr: string; peakMb: number }> {
  const report = join(cwd, `time-${Date.now()}.txt`);
  const withTime = existsSync(TIME);
  const child = withTime
    ? spawn(TIME, ['-v', '-o', report, process.execPath, CLI, ...args], { cwd })
    : spawn(process.execPath, [CLI, ...args], { cwd });
  const out: Buffer[] = [];
  let stderr = '';
  let hwmKb = 0;
  child.stdout.on('data', (d: Buffer) => out.push(d));
  child.stderr.on('data', (d: Buffer) => (stderr += String(d)));
  const poll = withTime
    ? undefined
    : setInterval(() => {
        try {
          const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
          if (m) hwmKb = Math.max(hwmKb, Number(m[1]));
        } catch {
          // gone between polls: the last reading stands
        }
      }, 20);
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      clearInterval(poll);
      if (withTime) {
        const m = /Maximum resident set size \(kbytes\): (\d+)/.exec(readFileSync(report, 'utf8'));
        if (!m) return reject(new Error(`no peak RSS in ${report}`));
        hwmKb = Number(m[1]);
      }
      resolve({ code, stdout: Buffer.concat(out), stderr, peakMb: Math.round(hwmKb / 1024) });
    });
  });
}
