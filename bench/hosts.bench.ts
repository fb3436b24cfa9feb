// Hosts benchmark, against a real sshd on loopback (the test fixture):
// 1. N = 100 host status queries (the hosts view's refresh: nvidia-smi, df, active runs): one reused ssh2 connection
//    vs one OpenSSH `ssh` process per query (BatchMode, same host, same script), the way most cluster extensions do it.
// 2. A refresh of a host with 100 run folders: how many round trips and how long.
// 3. Reading a 256 MB file: SshHost.readFile (pipelined SFTP range reads) vs OpenSSH `sftp` get of the same file.
import { spawnSync } from 'node:child_process';
import { rmSync, mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSshd } from '../test/integration/fixtures/sshd';
import { writeRunFolder } from '../test/fixtures/run-folders';
import { hostStatusScript, queryHostStatus, parseHostStatus } from '../src/core/runs/host-status';
import { shellQuote } from '../src/core/remote/shell-quote';

const N = 100;
const ROOT = process.env.MEDRL_ROOT ?? join(__dirname, '..');

async function main(): Promise<void> {
  const sshd = await startSshd({ alias: 'bench' });
  const host = sshd.makeHost();
  const entry = { runsDir: '~/medrl-runs', setup: [`export PATH=${join(ROOT, 'test/fixtures/nvidia-smi/standin')}:$PATH`], env: {} };
  for (let i = 0; i < 100; i++) {
    writeRunFolder(join(sshd.remoteHome, 'medrl-runs'), `run-${i}`, { pid: process.pid, ...(i % 4 !== 0 ? { exitCode: 0 } : {}) });
  }
  try {
    await queryHostStatus(host, entry); // connect once, as the view does on first look
    let t = performance.now();
    for (let i = 0; i < N; i++) {
      const s = await queryHostStatus(host, entry);
      if (s.gpus.length !== 2 || s.runCount !== 100) throw new Error('wrong status');
    }
    const reused = (performance.now() - t) / N;

    const script = hostStatusScript(entry);
    t = performance.now();
    for (let i = 0; i < N; i++) {
      const r = spawnSync(
        'ssh',
        [
          '-F',
          sshd.sshConfigPath,
          '-o',
          'BatchMode=yes',
          '-o',
          `UserKnownHostsFile=${sshd.knownHostsPath}`,
          sshd.alias,
          `sh -c ${shellQuote(script)}`,
        ],
        { encoding: 'utf8', env: { ...process.env, HOME: sshd.home } },
      );
      if (r.status !== 0) throw new Error(`ssh failed: ${r.stderr}`);
      if (parseHostStatus(r.stdout, 'ssh', { name: sshd.alias, runsDir: entry.runsDir }).runCount !== 100)
        throw new Error('wrong status over ssh');
    }
    const perProcess = (performance.now() - t) / N;
    console.log(
      `status query, N=${N}: reused ssh2 connection ${reused.toFixed(1)} ms/query; one ssh process per query (baseline) ${perProcess.toFixed(1)} ms/query; ratio ${(perProcess / reused).toFixed(1)}x (target >= 10x)`,
    );

    const before = host.stats().roundTrips;
    t = performance.now();
    const s = await queryHostStatus(host, entry);
    console.log(
      `refresh of a host with ${s.runCount} run folders (${s.activeRuns.length} active): ${host.stats().roundTrips - before} round trip(s), ${(performance.now() - t).toFixed(1)} ms`,
    );

    const size = 256 * 1024 * 1024;
    spawnSync('sh', ['-c', `head -c ${size} /dev/urandom > ${shellQuote(join(sshd.remoteHome, 'big.bin'))}`]);
    t = performance.now();
    const buf = await host.readFile('~/big.bin');
    const ours = performance.now() - t;
    if (buf.length !== size) throw new Error('short read');
    const local = mkdtempSync(join(tmpdir(), 'medrl-bench-'));
    t = performance.now();
    const r = spawnSync(
      'sftp',
      ['-F', sshd.sshConfigPath, '-o', 'BatchMode=yes', '-o', `UserKnownHostsFile=${sshd.knownHostsPath}`, '-b', '-', sshd.alias],
      { input: `get big.bin ${join(local, 'big.bin')}\n`, env: { ...process.env, HOME: sshd.home }, encoding: 'utf8' },
    );
    const sftp = performance.now() - t;
    if (r.status !== 0 || statSync(join(local, 'big.bin')).size !== size) throw new Error(`sftp failed: ${r.stderr}`);
    rmSync(local, { recursive: true, force: true });
    const mbs = (ms: number) => (256 / (ms / 1000)).toFixed(0);
    console.log(
      `read 256 MB: SshHost.readFile ${ours.toFixed(0)} ms (${mbs(ours)} MB/s); OpenSSH sftp get (baseline, includes its connect) ${sftp.toFixed(0)} ms (${mbs(sftp)} MB/s); ratio ${(sftp / ours).toFixed(2)}x`,
    );
  } finally {
    await host.dispose();
    await sshd.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
