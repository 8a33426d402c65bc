// Peak RSS probe for machines without GNU time: loaded with `node --require`, writes the process's
// maximum resident set size (KB) to $BENCH_RSS_FILE when it exits.
'use strict';
const fs = require('node:fs');
process.on('exit', () => {
  if (process.env.BENCH_RSS_FILE) fs.writeFileSync(process.env.BENCH_RSS_FILE, String(process.resourceUsage().maxRSS));
});
