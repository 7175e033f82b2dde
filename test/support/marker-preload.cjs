// Loaded through NODE_OPTIONS=--require by the e2e isolation suite (copied into the workspace, so
// a helper that received the variable could load it too): every node process that honours the
// variable appends its pid and script to markers.log beside this file.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
fs.appendFileSync(path.join(__dirname, 'markers.log'), `${process.pid} ${process.argv[1] || ''}\n`);
