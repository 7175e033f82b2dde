// One WebSocket connection as a child process that speaks lines: every text frame the server sends
// is written to stdout followed by a newline, every line read on stdin is sent as one text frame.
// It lets a test drive several connections of one `fs-sandbox app-server --listen ws://…` with the
// same stdio client it uses for the stdio transport. Exits when the connection closes, or closes
// the connection when stdin ends.
// Usage: node ws-line-bridge.cjs URL TOKEN
'use strict';
const { WebSocket } = require('ws');

const [url, token] = process.argv.slice(2);
const socket = new WebSocket(url, { headers: { Authorization: `Bearer ${token}` } });
let buffered = '';
const queued = [];
socket.on('open', () => {
  for (const line of queued.splice(0)) socket.send(line);
});
socket.on('message', (data) => process.stdout.write(`${data.toString()}\n`));
socket.on('close', () => process.exit(0));
socket.on('error', (error) => {
  process.stderr.write(`ws-line-bridge: ${error.message}\n`);
  process.exit(1);
});
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  buffered += chunk;
  for (let newline = buffered.indexOf('\n'); newline !== -1; newline = buffered.indexOf('\n')) {
    const line = buffered.slice(0, newline);
    buffered = buffered.slice(newline + 1);
    if (socket.readyState === WebSocket.OPEN) socket.send(line);
    else queued.push(line);
  }
});
process.stdin.on('end', () => socket.close());
