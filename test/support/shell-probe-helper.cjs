// A stand-in for the helper bundle (selected with FS_SANDBOX_HELPER_BUNDLE, run by node) that runs
// the shell script its request's path names, under the production helper launch: what a helper
// taken over by a hostile file could do is what that script can do. It answers in the helper
// protocol, the script's exit status and output as an fs/getMetadata result.
'use strict';
const { spawnSync } = require('node:child_process');

const chunks = [];
process.stdin.on('data', (chunk) => chunks.push(chunk));
process.stdin.on('end', () => {
  const text = Buffer.concat(chunks).toString('utf8');
  const request = JSON.parse(text.slice(0, text.indexOf('\n')));
  const answer = (response) =>
    process.stdout.write(
      `${JSON.stringify({ status: 'ok', payload: { operation: 'fs/getMetadata', response } })}\n`,
    );
  // Never outside a sandbox (a runtime self-check).
  if (request.sandboxed !== true) return answer({});
  const ran = spawnSync('/bin/sh', [request.params.path], { encoding: 'utf8', timeout: 20_000 });
  answer({ code: ran.status, stdout: ran.stdout, stderr: ran.stderr });
});
