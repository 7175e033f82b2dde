import { type ChildProcess, spawn } from 'node:child_process';

/**
 * Another process that flips `<target>/sub` between a directory full of files and a symlink to
 * `../keep`, by atomic renames, holding each state a moment (the race a tree remove must survive).
 * It stops by itself after a minute; kill it when done. `holdMicros` is how long each state holds:
 * a longer hold lets an operation that takes many steps see one state at some steps and the other
 * at later ones.
 */
export function startDirLinkToggler(target: string, holdMicros = 200): ChildProcess {
  const script = `const fs = require('fs'); const t = ${JSON.stringify(target)};
    const hold = () => { const until = process.hrtime.bigint() + ${holdMicros * 1000}n; while (process.hrtime.bigint() < until); };
    const end = Date.now() + 60000;
    while (Date.now() < end) { try {
      if (!fs.existsSync(t + '/d')) {
        fs.mkdirSync(t + '/d', { recursive: true });
        for (let i = 0; i < 20; i++) fs.writeFileSync(t + '/d/k' + i, 'x');
      }
      if (!fs.existsSync(t + '/l')) fs.symlinkSync('../keep', t + '/l');
      fs.renameSync(t + '/d', t + '/sub'); hold(); fs.renameSync(t + '/sub', t + '/d');
      fs.renameSync(t + '/l', t + '/sub'); hold(); fs.renameSync(t + '/sub', t + '/l');
    } catch {} }`;
  return spawn(process.execPath, ['-e', script], { stdio: 'ignore' });
}
