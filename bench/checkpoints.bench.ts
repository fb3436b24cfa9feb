// Checkpoint download over loopback SSH: our streamed download vs OpenSSH's sftp and scp on the same 1 GB file, in the
// same run. Target: at least 0.8x of OpenSSH. The tools take turns for several rounds (the machine is shared, so one
// round says little); the figures are medians. The file is generated in the sshd fixture's temp dir and removed.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, type SFTPWrapper } from 'ssh2';
import { startSshd, type SshdFixture } from '../test/integration/fixtures/sshd';
import { download } from '../src/core/checkpoints/download';

const SIZE_MB = Number(process.env.MEDRL_BENCH_MB ?? 1024);
const ROUNDS = Number(process.env.MEDRL_BENCH_ROUNDS ?? 3);

function mbps(bytes: number, seconds: number): number {
  return bytes / (1 << 20) / seconds;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}

/** ssh2's own fastGet (64 SFTP reads in flight) on a fresh connection: what SFTP through ssh2 reaches. */
async function ssh2FastGet(sshd: SshdFixture, file: string, dest: string): Promise<number> {
  const c = new Client();
  await new Promise<void>((res, rej) =>
    c
      .on('ready', () => res())
      .on('error', rej)
      .connect({ host: '127.0.0.1', port: sshd.port, username: 'root', privateKey: readFileSync(sshd.clientKey) }),
  );
  try {
    const sftp = await new Promise<SFTPWrapper>((res, rej) => c.sftp((e, s) => (e ? rej(e) : res(s))));
    const t = performance.now();
    await new Promise<void>((res, rej) =>
      sftp.fastGet(file, dest, { concurrency: 64, chunkSize: 256 * 1024 }, (e) => (e ? rej(e) : res())),
    );
    const s = (performance.now() - t) / 1000;
    rmSync(dest);
    return s;
  } finally {
    c.end();
  }
}

async function main(): Promise<void> {
  const sshd = await startSshd();
  const host = sshd.makeHost({ name: 'bench' });
  const out = mkdtempSync(join(tmpdir(), 'ck-bench-'));
  const file = join(sshd.remoteHome, 'model-00001-of-00001.safetensors');
  try {
    // sync: the generated file's dirty pages are written back before timing starts, not during the first tool's turn.
    const gen = spawnSync('sh', ['-c', `head -c ${SIZE_MB}M /dev/urandom > '${file}' && sync '${file}' && cat '${file}' > /dev/null`]);
    if (gen.status !== 0) throw new Error(`generating the file failed: ${gen.stderr.toString()}`);
    const bytes = statSync(file).size;
    const ssh = ['-F', sshd.sshConfigPath, '-o', `UserKnownHostsFile=${sshd.knownHostsPath}`, '-o', 'BatchMode=yes'];
    const env = { ...process.env, HOME: sshd.home };
    const timed = (label: string, argv: string[]): number => {
      const t = performance.now();
      const r = spawnSync(argv[0]!, argv.slice(1), {
        env,
        input: argv[0] === 'sftp' ? `get '${file}' '${join(out, label)}'\n` : undefined,
      });
      if (r.status !== 0) throw new Error(`${label} failed: ${r.stderr.toString()}`);
      const s = (performance.now() - t) / 1000;
      if (statSync(join(out, label)).size !== bytes) throw new Error(`${label}: wrong size`);
      rmSync(join(out, label));
      return s;
    };
    // OpenSSH's figures include its handshake; ours reuse the open connection, as the extension does.
    await host.exec('true');
    const ours = async (verify: boolean): Promise<number> => {
      const dest = join(out, `ours-${verify}`);
      const t = performance.now();
      const r = await download(host, file, dest, { verify });
      const s = (performance.now() - t) / 1000;
      if (r.bytes !== bytes || statSync(dest).size !== bytes) throw new Error('ours: wrong size');
      rmSync(dest);
      return s;
    };
    const runs: Record<'sftp' | 'scp' | 'ours' | 'oursVerified', number[]> = { sftp: [], scp: [], ours: [], oursVerified: [] };
    const ratios: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      // Who goes first alternates, so neither side always meets the previous turn's disk writeback.
      const turns: (() => Promise<void>)[] = [
        async () => void runs.ours.push(await ours(false)),
        async () => void runs.sftp.push(timed('sftp', ['sftp', ...ssh, '-b', '-', sshd.alias])),
        async () => void runs.scp.push(timed('scp', ['scp', ...ssh, `${sshd.alias}:${file}`, join(out, 'scp')])),
        async () => void runs.oursVerified.push(await ours(true)),
      ];
      for (const turn of i % 2 ? turns.reverse() : turns) await turn();
      ratios.push(Math.min(runs.sftp[i]!, runs.scp[i]!) / runs.ours[i]!);
      console.log(
        `round ${i + 1}: ours ${mbps(bytes, runs.ours[i]!).toFixed(0)}, sftp ${mbps(bytes, runs.sftp[i]!).toFixed(0)}, scp ${mbps(bytes, runs.scp[i]!).toFixed(0)}, ours+sha256 ${mbps(bytes, runs.oursVerified[i]!).toFixed(0)} MiB/s; ours / best OpenSSH ${ratios[i]!.toFixed(2)}x`,
      );
    }
    const fastGet = await ssh2FastGet(sshd, file, join(out, 'fastget'));
    const med = { sftp: median(runs.sftp), scp: median(runs.scp), ours: median(runs.ours), oursVerified: median(runs.oursVerified) };
    const openssh = Math.min(med.sftp, med.scp);
    const line = (label: string, s: number) =>
      `${label.padEnd(44)} ${s.toFixed(2).padStart(7)} s  ${mbps(bytes, s).toFixed(0).padStart(5)} MiB/s`;
    console.log(`download of a ${SIZE_MB} MiB file over loopback SSH (2 cores shared), medians of ${ROUNDS} rounds`);
    console.log(line('OpenSSH sftp (get)', med.sftp));
    console.log(line('OpenSSH scp', med.scp));
    console.log(line('ssh2 fastGet (SFTP through ssh2, one round)', fastGet));
    console.log(line('ours, verify off (no hashing)', med.ours));
    console.log(line('ours + sha256 on both sides (the default)', med.oursVerified));
    console.log(
      `ratio ours / best OpenSSH (throughput, medians): ${(openssh / med.ours).toFixed(2)}x (target >= 0.8x); median of the per-round ratios: ${median(ratios).toFixed(2)}x; with sha256 verification: ${(openssh / med.oursVerified).toFixed(2)}x; ours / ssh2 fastGet: ${(fastGet / med.ours).toFixed(2)}x`,
    );
  } finally {
    rmSync(out, { recursive: true, force: true });
    rmSync(file, { force: true });
    await host.dispose();
    await sshd.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
