#!/usr/bin/env node
// The command: the twin and its CLI, bundled into dist/ by `npm run build` (scripts/build.ts).
'use strict';
require('../dist/cli.js');
